// A throwaway backend for the tests, registered the way every backend folder registers itself
// (common/registry.hpp) and linked into the test binary only. tests/test_backends.cpp and tests/test_cli.cpp
// show that it appears in the registry and in `suite --list`, runs and passes validation, though no other
// file names it: what README.md's "Adding a backend" promises.
#include <algorithm>

#include "common/registry.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"
#include "suite/reference.hpp"

namespace cnn::test {
namespace {

// The FP64 reference rounded to FP32: slow, but a whole forward pass in a few lines.
class Fp64Session final : public HostSession {
 public:
  Fp64Session(const Network& net, const RunConfig&) : net_(net) {}
  double forward(LayerTimes&) override {
    StopWatch sw;
    for (std::size_t i = 0; i < n_; ++i) {
      const auto p = reference_forward(net_, pixels_ + i * kImageBytes);
      std::transform(p.begin(), p.end(), probs_.begin() + std::ptrdiff_t(i * kClasses),
                     [](double v) { return float(v); });
    }
    return sw.ms();
  }
  std::size_t batch() const override { return 1; }

 private:
  const Network& net_;
};

const BackendRegistration kThrowaway{"throwaway", [] { return Availability{true, "", "CPU (test backend)"}; }};

const VariantRegistration kFp64{"throwaway", 1, open_session<Fp64Session>,
    {"fp64", "the FP64 reference rounded to FP32 (a test backend)", false}};

}  // namespace
}  // namespace cnn::test
