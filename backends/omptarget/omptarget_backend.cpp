// Registration of the OpenMP target offload backend: the steps of the OpenACC port, in OpenMP.
// Always runnable: without a GPU (or without GCC's nvptx offload) the target regions run on the host.
#include "backends/omptarget/omptarget_runtime.hpp"
#include "backends/omptarget/omptarget_variants.hpp"
#include "common/variant_table.hpp"

namespace cnn {

std::unique_ptr<Backend> make_omptarget_backend() {
  return std::make_unique<VariantTable>(
      "omptarget", [] { return Availability{true, "", omptarget::runtime_facts().device}; },
      std::vector<VariantEntry>{
          {{"layers", "a target teams distribute parallel for per layer, weights and activations mapped each call",
            true},
           omptarget::open_layers},
          {{"resident", "the same regions, with weights, images and activations resident on the device", true},
           omptarget::open_resident},
          {{"fused", "conv+ReLU+pool and FC+softmax fused, one parallel-for-simd loop over images x filter groups "
                     "x pixels (openacc:batch's step)",
            false},
           omptarget::open_fused},
      });
}

}  // namespace cnn
