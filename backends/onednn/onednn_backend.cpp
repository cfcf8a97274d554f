// Registration of the oneDNN backend: the CPU vendor yardstick, one variant.
#include "backends/onednn/onednn_variants.hpp"
#include "common/variant_table.hpp"

namespace cnn {

std::unique_ptr<Backend> make_onednn_backend() {
  return std::make_unique<VariantTable>(
      "onednn", [] { return Availability{true, "", onednn::device()}; },
      std::vector<VariantEntry>{
          {{"fp32", "oneDNN 2.x primitives: conv with fused ReLU, max pool, inner product, softmax; formats chosen "
                    "by the library",
            false},
           onednn::open_fp32},
      });
}

}  // namespace cnn
