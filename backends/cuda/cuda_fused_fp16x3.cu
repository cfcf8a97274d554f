// cuda:fused_fp16x3: the tensor-core skeleton of fused_mma.cuh (cuda:fused_persistent's one-block-per-SM fused
// network, each convolution an implicit GEMM on mma.sync) with FP16 tiles, m16n8k16, and FP32 accuracy
// from "3xFP16" (cuda_fp16x3.cuh). What it changes against cuda:fused_tf32x3:
// - FP16 tiles run at twice the TF32 rate on the tensor cores: the same 3 passes take half the tensor time.
// - Both halves of a value fit in 32 bits, so activations are stored split (written once by the layer that
//   produces them, not split at every one of their 25 reuses) and the weights are stored split, in fragment
//   order, at setup: no split in the inner loop, two byte permutes per pair of activations instead.
// - FP16's range: activations and weights of this network are far from its 65504 maximum; a lo below FP16's
//   normal range (6.1e-5) keeps an absolute error under 2^-25, far below what the FP64 check notices.
#include "backends/cuda/cuda_fp16x3.cuh"
#include "backends/cuda/cuda_fused_mma.cuh"
#include "common/registry.hpp"

namespace cnn::cuda {
namespace {

const VariantRegistration kFp16x3{"cuda", 6, open_session<fused_mma::FusedMmaSession<Fp16x3>>,
    {"fused_fp16x3", "as fused_tf32x3 with FP16 tiles (m16n8k16, twice the TF32 rate), 3 passes of hi/lo "
                           "halves, activations and weights stored split: FP32 accuracy", false,
     {"fp16_tensor", fused_mma::kThreePassFlopPerImage}}};

}  // namespace
}  // namespace cnn::cuda
