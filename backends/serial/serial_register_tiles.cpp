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
  SerialRegisterTilesSession(const Network& net, const RunConfig& config) : HostSession(config, 1, 1), net_(net) {}

  double forward(LayerTimes&) override {
    StopWatch sw;
    for_each_slice(4096, [&](std::size_t first, std::size_t last) {  // an image at a time; 4096: progress
      for (std::size_t i = first; i < last; ++i)
        fast::forward_image(net_, pixels_ + i * kImageBytes, scratch_, probs_.data() + i * kClasses);
    });
    return sw.ms();
  }

 private:
  fast::PackedNetwork net_;
  fast::Scratch scratch_;
};

const VariantRegistration kOpt{"serial", 2, open_session<SerialRegisterTilesSession>,
    {"register_tiles", "no bounds checks, packed weights, registers blocked over pixels x all filters (kernels/cpu)",
     false}};

}  // namespace
}  // namespace cnn::serial
