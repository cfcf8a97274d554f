// openmp:image_parallel: threads over images. Each thread runs the optimised per-image forward pass of
// serial:register_tiles (common/kernels/cpu/fast_forward.hpp) with its own scratch buffers, so an image's activations
// stay in that core's cache through the whole network and threads never synchronise inside an image.
// Against openmp:naive this removes 11 fork/joins per image and the thesis' bounds-checked loops.
#include "backends/openmp/openmp_image_groups.hpp"
#include "common/kernels/cpu/fast_forward.hpp"
#include "common/registry.hpp"

namespace cnn::openmp {
namespace {

struct RegisterTilesKernel {
  using Network = fast::PackedNetwork;
  using Scratch = fast::Scratch;
  static constexpr std::size_t kImages = 1;
  static void forward(const Network& net, const std::uint8_t* pixels, std::size_t, Scratch& s, float* probs) {
    fast::forward_image(net, pixels, s, probs);
  }
};

const VariantRegistration kImageParallel{"openmp", 2, open_session<ImageGroupsSession<RegisterTilesKernel>>,
    {"image_parallel", "threads over images, each running serial:register_tiles's kernel with its activations in cache", false}};

}  // namespace
}  // namespace cnn::openmp
