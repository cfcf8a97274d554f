// serial:naive, a faithful C++ port of the thesis' serial code (backends/cpu_kernels/thesis_naive.hpp),
// compiled without OpenMP. It is the baseline: every other variant's speedup is measured against it.
#include "backends/cpu_kernels/thesis_naive.hpp"
#include "backends/serial/serial_variants.hpp"

namespace cnn::serial {

std::unique_ptr<Session> open_naive(const Network& net, const RunConfig& config) {
  return std::make_unique<thesis::NaiveSession>(net, config);
}

}  // namespace cnn::serial
