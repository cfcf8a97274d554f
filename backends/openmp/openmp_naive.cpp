// openmp:naive, the thesis' OpenMP step: serial:naive's loops (backends/cpu_kernels/thesis_naive.hpp),
// compiled here with OpenMP so that their `omp parallel for` over output maps takes effect. One image at
// a time, layer by layer: the parallel regions are small (16-20 maps), so fork/join costs show.
#include "backends/cpu_kernels/thesis_naive.hpp"
#include "backends/openmp/openmp_variants.hpp"

namespace cnn::openmp {

std::unique_ptr<Session> open_naive(const Network& net, const RunConfig& config) {
  return std::make_unique<thesis::NaiveSession>(net, config);
}

}  // namespace cnn::openmp
