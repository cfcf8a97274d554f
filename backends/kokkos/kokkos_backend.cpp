// The kokkos backend: one source, run on the default execution space of the Kokkos it is built against
// (Serial, OpenMP or Cuda); the space's name is the device the report shows. Its variants register
// themselves in their files.
#include "backends/kokkos/kokkos_session.hpp"
#include "common/registry.hpp"

namespace cnn::kokkos {
namespace {

const BackendRegistration kKokkos{"kokkos", [] { return availability(); }};

}  // namespace
}  // namespace cnn::kokkos
