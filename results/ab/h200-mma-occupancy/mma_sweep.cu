// How fast mma.sync m16n8k16 (FP16 in, FP32 accumulators) runs with as few warps per SM as conv1_pixels_kernel has
// (16: 2 blocks of 8), and with its B operands from shared memory (one 64-bit load per 4 mma, as conv1 loads a
// window row for its 2 rows x lo/hi), against gpu_peak's loop (all resident warps, operands in registers).
//   nvcc -O3 -arch=sm_90 -o mma_sweep mma_sweep.cu && ./mma_sweep
// One line per configuration: warps per SM, independent accumulators per warp, B from registers or shared
// memory, TFLOP/s (median of 5 launches).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                 \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

constexpr int kIters = 2048;

__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int kChains, bool kShared>
__global__ void sweep(float* out) {
  __shared__ uint2 words[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) words[i] = make_uint2(i, 3 * i);
  __syncthreads();
  const unsigned a[4] = {threadIdx.x, 1u, 2u, 3u};
  uint2 b = make_uint2(4u, threadIdx.x);
  float acc[kChains][4] = {};
  const int lane = threadIdx.x % 32;
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if (kShared && c % 4 == 0) b = words[(i * 37 + c * 8 + lane) & 1023];  // a new B for each 4 mma
      mma(acc[c], a, b.x, b.y);
    }
  }
  float s = 0;
  for (int c = 0; c < kChains; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  if (s == 12345.f) out[0] = s;
}

template <int kChains, bool kShared>
void run(int sms, int warps_per_sm, float* out) {
  const int warps_per_block = 8, blocks = sms * warps_per_sm / warps_per_block;
  auto launch = [&] { sweep<kChains, kShared><<<blocks, 32 * warps_per_block>>>(out); };
  launch();
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<double> rates;
  for (int r = 0; r < 5; ++r) {
    CHECK(cudaEventRecord(start));
    launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    const double flop = 2.0 * 16 * 8 * 16 * kChains * double(kIters) * blocks * warps_per_block;
    rates.push_back(flop / (ms * 1e-3) / 1e12);
  }
  std::sort(rates.begin(), rates.end());
  std::printf("{\"warps_per_sm\": %d, \"chains\": %d, \"b_from\": \"%s\", \"tflop_per_s\": %.1f}\n", warps_per_sm,
              kChains, kShared ? "shared" : "registers", rates[2]);
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* out = nullptr;
  CHECK(cudaMalloc(&out, sizeof(float)));
  for (int w : {8, 16, 32, 64}) {
    run<4, false>(sms, w, out);
    run<8, false>(sms, w, out);
    run<16, false>(sms, w, out);
    run<8, true>(sms, w, out);
    run<16, true>(sms, w, out);
  }
  return 0;
}
