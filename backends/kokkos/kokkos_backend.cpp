// Registration of the kokkos backend: one source, run on the default execution space of the Kokkos it is
// built against (Serial, OpenMP or Cuda); the space's name is the device the report shows.
#include "backends/kokkos/kokkos_session.hpp"
#include "backends/kokkos/kokkos_variants.hpp"
#include "common/variant_table.hpp"

namespace cnn {

std::unique_ptr<Backend> make_kokkos_backend() {
  return std::make_unique<VariantTable>(
      "kokkos", [] { return kokkos::availability(); },
      std::vector<VariantEntry>{
          {{"naive", "layer by layer: one RangePolicy parallel_for per layer over all outputs of a chunk", true},
           kokkos::open_naive},
          {{"team", "TeamPolicy, a team per image, activations in team scratch, conv+ReLU+pool fused", false},
           kokkos::open_team},
          {{"tiled", "team per image, padded scratch, repacked weights, register tiles chosen per space", false},
           kokkos::open_tiled},
      });
}

}  // namespace cnn
