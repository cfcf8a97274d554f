// serial:winograd, serial:register_tiles with conv2 and conv3 as Winograd F(4x4, 5x5) convolutions
// (common/kernels/cpu/winograd_forward.hpp): 64 multiplies per 4x4 output tile and channel pair instead
// of 400, on one thread, four images at a time (SIMD lanes over images and tiles). conv1 too, with its
// 3-channel sums fused into the output transform.
#include "common/kernels/cpu/winograd_f4x5.hpp"
#include "common/kernels/cpu/winograd_forward.hpp"
#include "common/timer.hpp"
#include "common/registry.hpp"
#include "common/variant_table.hpp"

namespace cnn::serial {
namespace {

class SerialWinogradSession final : public HostSession {
 public:
  // The kernel takes winograd::kImageGroup images per pass whatever --batch says (as serial:naive takes one),
  // and that is the batch reported.
  SerialWinogradSession(const Network& net, const RunConfig& config)
      : HostSession(config, std::min<std::size_t>(winograd::kImageGroup, std::max<std::size_t>(config.images, 1)), 1),
        net_(net) {}

  double forward(LayerTimes&) override {
    StopWatch sw;
    // Progress granularity, a multiple of the group: slicing does not change the passes the kernel makes.
    for_each_slice(4096, [&](std::size_t first, std::size_t last) {
      winograd::forward_images(net_, pixels_ + first * kImageBytes, last - first, scratch_,
                               probs_.data() + first * kClasses);
    });
    return sw.ms();
  }

 private:
  winograd::PackedNetwork net_;
  winograd::Scratch scratch_;
};

const VariantRegistration kWinograd{"serial", 3, open_session<SerialWinogradSession>,
    {"winograd", "serial:register_tiles with Winograd F(4x4,5x5) convolutions: 64 multiplies per 4x4 tile and channel pair "
                 "instead of 400, four images per SIMD pass", false,
     {"fp32_fma", winograd::kExecutedFlopPerImage}}};

}  // namespace
}  // namespace cnn::serial
