// Registration of the OpenACC backend: the thesis' steps, in the order a reader should meet them.
// Always runnable: without a GPU (or without GCC's nvptx offload) the same regions run on the host.
#include "backends/openacc/openacc_runtime.hpp"
#include "backends/openacc/openacc_variants.hpp"
#include "common/variant_table.hpp"

namespace cnn {

std::unique_ptr<Backend> make_openacc_backend() {
  return std::make_unique<VariantTable>(
      "openacc", [] { return Availability{true, "", openacc::runtime_facts().device}; },
      std::vector<VariantEntry>{
          {{"naive", "the thesis' first port: a parallel loop per layer, weights and activations copied each call",
            true},
           openacc::open_naive},
          {{"data", "the same loops, with weights, images and activations resident on the device (present)", true},
           openacc::open_data},
          {{"gangs",
            "conv+ReLU+pool and FC+softmax fused; a gang per image, worker x vector over filters x pixels", false},
           openacc::open_gangs},
          {{"batch",
            "the fused regions as one gang-worker-vector loop over images x filter groups x pixels, 4 filters each",
            false},
           openacc::open_batch},
      });
}

}  // namespace cnn
