// Registration of the CUDA backend: the thesis' layer-wise port, the classic tiling step, and the whole
// network in one kernel.
#include "backends/cuda/cuda_support.hpp"
#include "backends/cuda/variants.hpp"
#include "common/variant_table.hpp"

namespace cnn {

std::unique_ptr<Backend> make_cuda_backend() {
  return std::make_unique<VariantTable>(
      "cuda", [] { return cuda::availability(); },
      std::vector<VariantEntry>{
          {{"naive", "one thread per output value, layer by layer, global memory (the direct port)", true},
           cuda::open_naive},
          {{"tiled", "layer by layer; input planes staged in shared memory, conv1/conv2 weights in constant "
                     "memory, unrolled 5x5 loops, several filters per thread",
            true},
           cuda::open_tiled},
          {{"fused", "the whole network in one kernel: a block per image at a time, every activation in shared "
                     "memory, uint8 pixels in, 10 probabilities out",
            false},
           cuda::open_fused},
          {{"fused_batch", "the whole network in one kernel: a block per SM on 3 images at a time, all weights "
                           "and activations in shared memory, every warp busy in every layer",
            false},
           cuda::open_fused_batch},
          {{"fused_tf32x3", "the whole network in one kernel like fused_batch, the convolutions as implicit GEMMs on "
                            "the tensor cores (mma.sync TF32, 3 passes of big/small halves: FP32 accuracy)",
            false},
           cuda::open_fused_tf32x3},
          {{"fused_fp16x3", "as fused_tf32x3 with FP16 tiles (m16n8k16, twice the TF32 rate), 3 passes of hi/lo "
                            "halves, activations and weights stored split: FP32 accuracy",
            false},
           cuda::open_fused_fp16x3},
      });
}

}  // namespace cnn
