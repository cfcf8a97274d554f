// Registration of the stdpar backend: C++17 parallel algorithms.
#include <tbb/info.h>
#include <tbb/version.h>

#include "backends/stdpar/stdpar_variants.hpp"
#include "common/variant_table.hpp"

namespace cnn {

std::unique_ptr<Backend> make_stdpar_backend() {
  return std::make_unique<VariantTable>(
      "stdpar", [] { return Availability{true, "", stdpar::device()}; },
      std::vector<VariantEntry>{
          {{"layers", "the thesis' loops, layer by layer over a chunk of images, std::for_each(par_unseq) over "
                      "(image, output map)",
            true},
           stdpar::open_layers},
          {{"image_blocks", "std::for_each(par) over blocks of images, each image through serial:opt's kernel",
            false},
           stdpar::open_image_blocks},
      });
}

std::string stdpar::device() {
  return "CPU, " + std::to_string(tbb::info::default_concurrency()) + " cores (libstdc++ parallel algorithms on oneTBB " +
         TBB_VERSION_STRING + ")";
}

}  // namespace cnn
