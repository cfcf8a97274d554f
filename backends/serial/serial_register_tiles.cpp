// serial:register_tiles, the optimised CPU forward pass (common/kernels/cpu/fast_forward.hpp) on one thread, one
// image after another. Against serial:naive it removes the bounds checks, re-lays weights so one tap's
// filters are contiguous, and blocks registers over a vector of pixels times all filters.
// Figures: backends/openmp/README.md.
#include "common/kernels/cpu/fast_forward.hpp"
#include "common/registry.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"

namespace cnn::serial {
namespace {

class SerialRegisterTilesSession final : public HostSession {
 public:
  SerialRegisterTilesSession(const Network& net, const RunConfig& config) : net_(net), progress_(config.progress) {}

  double forward(LayerTimes&) override {
    StopWatch sw;
    for (std::size_t i = 0; i < n_; ++i) {
      fast::forward_image(net_, pixels_ + i * kImageBytes, scratch_, probs_.data() + i * kClasses);
      if (progress_ && (i + 1) % 4096 == 0) progress_(i + 1, n_);
    }
    return sw.ms();
  }
  std::size_t batch() const override { return 1; }

 private:
  fast::PackedNetwork net_;
  fast::Scratch scratch_;
  std::function<void(std::size_t, std::size_t)> progress_;
};

const VariantRegistration kOpt{"serial", 2, open_session<SerialRegisterTilesSession>,
    {"register_tiles", "no bounds checks, packed weights, registers blocked over pixels x all filters (kernels/cpu)",
     false}};

}  // namespace
}  // namespace cnn::serial
