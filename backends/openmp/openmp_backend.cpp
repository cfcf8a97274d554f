// The OpenMP backend: runnable wherever it was built, on every core. Its variants register themselves in
// their files.
#include <omp.h>

#include "common/registry.hpp"

namespace cnn::openmp {
namespace {

const BackendRegistration kOpenMp{
    "openmp", [] { return Availability{true, "", "CPU, " + std::to_string(omp_get_num_procs()) + " cores"}; }};

}  // namespace
}  // namespace cnn::openmp
