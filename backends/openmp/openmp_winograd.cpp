// openmp:winograd: threads over groups of images, as openmp:image_parallel, each group running the
// Winograd forward pass of serial:winograd (common/kernels/cpu/winograd_forward.hpp) with its own scratch.
#include "backends/openmp/openmp_image_groups.hpp"
#include "common/kernels/cpu/winograd_f4x5.hpp"
#include "common/kernels/cpu/winograd_forward.hpp"
#include "common/registry.hpp"

namespace cnn::openmp {
namespace {

struct WinogradKernel {
  using Network = winograd::PackedNetwork;
  using Scratch = winograd::Scratch;
  static constexpr std::size_t kImages = winograd::kImageGroup;
  static void forward(const Network& net, const std::uint8_t* pixels, std::size_t count, Scratch& s, float* probs) {
    winograd::forward_images(net, pixels, count, s, probs);
  }
};

const VariantRegistration kWinograd{"openmp", 3, open_session<ImageGroupsSession<WinogradKernel>>,
    {"winograd", "threads over groups of images, each through serial:winograd's kernel", false,
     {"fp32_fma", winograd::kExecutedFlopPerImage}}};

}  // namespace
}  // namespace cnn::openmp
