// serial:winograd, serial:opt with conv2 and conv3 as Winograd F(4x4, 5x5) convolutions
// (backends/cpu_kernels/winograd_forward.hpp): 64 multiplies per 4x4 output tile and channel pair instead
// of 400, on one thread, four images at a time. conv1 stays serial:opt's direct kernel.
#include "backends/cpu_kernels/winograd_forward.hpp"
#include "backends/serial/serial_variants.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"

namespace cnn::serial {
namespace {

class WinogradSession final : public HostSession {
 public:
  WinogradSession(const Network& net, const RunConfig& config) : net_(net), progress_(config.progress) {}

  double forward(LayerTimes&) override {
    StopWatch sw;
    constexpr std::size_t slice = 4096;  // progress granularity, a multiple of the group
    for (std::size_t first = 0; first < n_; first += slice) {
      const std::size_t count = std::min(slice, n_ - first);
      winograd::forward_images(net_, pixels_ + first * kImageBytes, count, scratch_,
                               probs_.data() + first * kClasses);
      if (progress_) progress_(first + count, n_);
    }
    return sw.ms();
  }
  std::size_t batch() const override { return winograd::kGroup; }

 private:
  winograd::PackedNetwork net_;
  winograd::Scratch scratch_;
  std::function<void(std::size_t, std::size_t)> progress_;
};

}  // namespace

std::unique_ptr<Session> open_winograd(const Network& net, const RunConfig& config) {
  return std::make_unique<WinogradSession>(net, config);
}

}  // namespace cnn::serial
