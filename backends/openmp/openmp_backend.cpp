// Registration of the OpenMP backend.
#include <omp.h>

#include "backends/openmp/openmp_variants.hpp"
#include "common/variant_table.hpp"

namespace cnn {

std::unique_ptr<Backend> make_openmp_backend() {
  return std::make_unique<VariantTable>(
      "openmp",
      [] { return Availability{true, "", "CPU, " + std::to_string(omp_get_num_procs()) + " cores"}; },
      std::vector<VariantEntry>{
          {{"naive", "the thesis' OpenMP port: serial:naive's loops with `omp parallel for` over output maps", true},
           openmp::open_naive},
          {{"batch", "threads over images, each running serial:opt's kernel with its activations in cache", false},
           openmp::open_batch},
          {{"winograd", "threads over groups of images, each running serial:winograd's kernel", false},
           openmp::open_winograd},
      });
}

}  // namespace cnn
