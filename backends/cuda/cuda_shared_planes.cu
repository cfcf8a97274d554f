// cuda:shared_planes, the classic optimisation step over cuda:naive, still layer by layer:
// - a block takes one image and FPT filters; it stages the image's whole padded input (all channels) in
//   shared memory once, so the 5x5xC window reads come from shared memory, not global;
// - the padding is stored as zeros: no bounds checks in the inner loop;
// - conv1 and conv2 weights sit in constant memory (a warp reads one weight: a broadcast); conv3's 40 KB
//   would overflow the 64 KB of constant memory next to them, so it comes through the read-only cache;
// - the 5x5 loops are unrolled, and each thread computes FPT filters of its pixel (input reuse in registers).
#include "backends/cuda/cuda_layerwise.cuh"
#include "common/registry.hpp"

namespace cnn::cuda {
namespace {

constexpr int FPT = 4;  // filters per thread
static_assert(kConv1.filters % FPT == 0 && kConv2.filters % FPT == 0 && kConv3.filters % FPT == 0);

__constant__ float c_w1[kConv1.weight_count()];
__constant__ float c_w2[kConv2.weight_count()];

template <int L>
__device__ __forceinline__ float weight(const float* global_w, int f, int c, int tap) {
  const int i = (f * kConvs[L].in_channels + c) * kTaps + tap;
  if constexpr (L == 0) return c_w1[i];
  else if constexpr (L == 1) return c_w2[i];
  else return __ldg(global_w + i);
}

// Block: one image, filters [FPT * blockIdx.y, +FPT); one thread per output pixel (side x side threads).
// L: the conv layer (0..2); an index, not a reference, as nvcc's kernel stubs need.
template <int L>
__global__ void conv_shared_planes(const float* __restrict__ in, const float* __restrict__ w,
                                   const float* __restrict__ bias, float* __restrict__ out) {
  constexpr ConvSpec S = kConvs[L];
  constexpr int C = S.in_channels, N = S.in_side, P = N + 2 * S.pad, O = S.out_side();
  __shared__ float tile[C * P * P];
  const std::size_t img = blockIdx.x;
  const float* src = in + img * C * N * N;
  for (int i = threadIdx.x; i < C * P * P; i += blockDim.x) {
    const int c = i / (P * P), y = i / P % P - S.pad, x = i % P - S.pad;
    tile[i] = (y >= 0 && y < N && x >= 0 && x < N) ? src[(c * N + y) * N + x] : 0.0f;
  }
  __syncthreads();
  const int y = threadIdx.x / O, x = threadIdx.x % O, f0 = blockIdx.y * FPT;
  float acc[FPT];
#pragma unroll
  for (int f = 0; f < FPT; ++f) acc[f] = __ldg(bias + f0 + f);
  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int ky = 0; ky < 5; ++ky)
#pragma unroll
      for (int kx = 0; kx < 5; ++kx) {
        const float v = tile[(c * P + y + ky) * P + x + kx];
#pragma unroll
        for (int f = 0; f < FPT; ++f) acc[f] += weight<L>(w, f0 + f, c, ky * 5 + kx) * v;
      }
  }
#pragma unroll
  for (int f = 0; f < FPT; ++f) out[((img * S.filters + f0 + f) * O + y) * O + x] = acc[f];
}

struct SharedPlanesConv {
  static constexpr const char* kLabel = "cuda:shared_planes";
  const float* w[3];
  const float* b[3];
  template <typename Session>
  void setup(const Network& net, Session& session) {
    check(cudaMemcpyToSymbol(c_w1, net.conv1.weights.data(), sizeof(c_w1)), "conv1 weights");
    check(cudaMemcpyToSymbol(c_w2, net.conv2.weights.data(), sizeof(c_w2)), "conv2 weights");
    for (int l = 0; l < 3; ++l) {
      w[l] = session.to_device(net.conv(l).weights);
      b[l] = session.to_device(net.conv(l).bias);
    }
  }
  template <int L>
  void launch(const float* in, float* out, std::size_t n, cudaStream_t s) const {
    constexpr ConvSpec S = kConvs[L];
    const dim3 grid(unsigned(n), S.filters / FPT);
    conv_shared_planes<L><<<grid, S.out_side() * S.out_side(), 0, s>>>(in, w[L], b[L], out);
  }
  void operator()(int l, const float* in, float* out, std::size_t n, cudaStream_t s) const {
    if (l == 0) launch<0>(in, out, n, s);
    else if (l == 1) launch<1>(in, out, n, s);
    else launch<2>(in, out, n, s);
  }
};

const VariantRegistration kSharedPlanes{"cuda", 2, open_session<layerwise::CudaLayerwiseSession<SharedPlanesConv>>,
    {"shared_planes", "layer by layer; input planes staged in shared memory, conv1/conv2 weights in constant memory, "
                      "unrolled 5x5 loops, several filters per thread", true}};

}  // namespace
}  // namespace cnn::cuda
