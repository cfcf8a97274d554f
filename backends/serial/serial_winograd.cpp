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
      : net_(net),
        batch_(std::min<std::size_t>(winograd::kImageGroup, std::max<std::size_t>(config.images, 1))),
        progress_(config.progress) {}

  double forward(LayerTimes&) override {
    StopWatch sw;
    // Progress granularity, a multiple of the group: slicing does not change the passes the kernel makes.
    constexpr std::size_t slice = 4096;
    for (std::size_t first = 0; first < n_; first += slice) {
      const std::size_t count = std::min(slice, n_ - first);
      winograd::forward_images(net_, pixels_ + first * kImageBytes, count, scratch_,
                               probs_.data() + first * kClasses);
      if (progress_) progress_(first + count, n_);
    }
    return sw.ms();
  }
  std::size_t batch() const override { return batch_; }  // images through the kernel per pass

 private:
  winograd::PackedNetwork net_;
  std::size_t batch_;
  winograd::Scratch scratch_;
  std::function<void(std::size_t, std::size_t)> progress_;
};

const VariantRegistration kWinograd{"serial", 3, open_session<SerialWinogradSession>,
    {"winograd", "serial:register_tiles with Winograd F(4x4,5x5) convolutions: 64 multiplies per 4x4 tile and channel pair "
                 "instead of 400, four images per SIMD pass", false,
     {"fp32_fma", winograd::kExecutedFlopPerImage}}};

}  // namespace
}  // namespace cnn::serial
