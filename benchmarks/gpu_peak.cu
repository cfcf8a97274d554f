// The GPU's peaks for the units the suite's variants run on, measured, not taken from a data sheet: FP32
// FMA (the FP32 CUDA variants, cuDNN, Kokkos, the offload models), TF32 and FP16 tensor-core products
// (the fused tf32x3 and fp16x3 variants). Each unit two ways, and its peak is the faster:
//   - a loop of independent instructions of the kind the variants issue (FFMA; mma.sync m16n8k8 TF32 and
//     m16n8k16 FP16 with FP32 accumulators, as the fused_*x3 kernels use them);
//   - cuBLAS on large square matrices (8192^3), which may use instructions the loop does not (wgmma).
// Prints one JSON object: {"gpu_name": ..., "peaks_gflop_per_s": {"fp32_fma": ..., ...}, "detail": {...}},
// the median of 5 timed launches each. scripts/report reads it as the platform's peaks (gpu_peak.json).
// "detail" also has the pinned host-to-device copy rate, which bounds every variant's end-to-end time.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/network_spec.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gpu_peak: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "gpu_peak: %s: cuBLAS status %d\n", what, int(s));
    std::exit(1);
  }
}

constexpr int kIters = 4096;
constexpr int kChains = 8;  // independent accumulators per thread: enough to hide the pipeline latency

__global__ void ffma_loop(float* out, float a, float b) {
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = threadIdx.x + c;
  for (int i = 0; i < kIters; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = fmaf(acc[c], a, b);
  float s = 0;
  for (int c = 0; c < kChains; ++c) s += acc[c];
  if (s == 12345.f) out[0] = s;  // never true: keeps the loop alive
}

// One m16n8k8 TF32 or m16n8k16 FP16 mma.sync per chain and step, FP32 accumulators (the fused_*x3 kernels'
// instructions); the operands' values do not change the rate.
template <bool F16>
__global__ void mma_loop(float* out) {
  unsigned a[4] = {threadIdx.x, 1u, 2u, 3u}, b[2] = {4u, threadIdx.x};
  float acc[kChains][4] = {};
  for (int i = 0; i < kIters; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if constexpr (F16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      else
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
  float s = 0;
  for (int c = 0; c < kChains; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  if (s == 12345.f) out[0] = s;
}

// `units` of work (FLOP, or bytes copied) per second / 1e9: the median of 5 timed launches after a warm-up.
template <class Launch>
double median_giga_per_s(double units, Launch launch) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  launch();  // warm-up: clocks up, code loaded
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> rates;
  for (int r = 0; r < 5; ++r) {
    check(cudaEventRecord(start), "record");
    launch();
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    rates.push_back(units / (ms * 1e-3) / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return rates[rates.size() / 2];
}

double gemm_gflops(cublasHandle_t h, cudaDataType type, cublasComputeType_t compute, int n) {
  const std::size_t elems = std::size_t(n) * n;
  const std::size_t bytes = elems * (type == CUDA_R_16F ? 2 : 4);
  void *a, *b, *c;
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaMalloc(&c, elems * 4), "cudaMalloc");
  check(cudaMemset(a, 0, bytes), "memset");  // zeros: the rate does not depend on the values
  check(cudaMemset(b, 0, bytes), "memset");
  const float alpha = 1, beta = 0;
  const double gf = median_giga_per_s(2.0 * n * n * double(n), [&] {
    check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, type, n, b, type, n, &beta, c, CUDA_R_32F,
                       n, compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  });
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return gf;
}

// Host-to-device copies from pinned memory, GB/s: the link that bounds a variant's end-to-end time (50000
// CIFAR-10 images are 154 MB, the size copied here), whatever its forward pass takes.
double h2d_pinned_gb_per_s() {
  const std::size_t bytes = std::size_t(50000) * cnn::kImageBytes;
  void *host, *dev;
  check(cudaMallocHost(&host, bytes), "cudaMallocHost");
  check(cudaMalloc(&dev, bytes), "cudaMalloc");
  const double gbs = median_giga_per_s(double(bytes), [&] {
    check(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice), "h2d copy");
  });
  cudaFree(dev);
  cudaFreeHost(host);
  return gbs;
}

}  // namespace

int main() {
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&device) != cudaSuccess || device == 0) {
    std::fprintf(stderr, "gpu_peak: no CUDA device\n");
    return 4;
  }
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  float* out;
  check(cudaMalloc(&out, sizeof(float)), "cudaMalloc");
  const int threads = 256, blocks = prop.multiProcessorCount * 8;
  const double lanes = double(threads) * blocks, warps = lanes / 32;
  const double ffma = median_giga_per_s(2.0 * kChains * kIters * lanes, [&] { ffma_loop<<<blocks, threads>>>(out, 1.0001f, 0.5f); });
  const double tf32_mma = median_giga_per_s(2.0 * 16 * 8 * 8 * kChains * kIters * warps, [&] { mma_loop<false><<<blocks, threads>>>(out); });
  const double f16_mma = median_giga_per_s(2.0 * 16 * 8 * 16 * kChains * kIters * warps, [&] { mma_loop<true><<<blocks, threads>>>(out); });
  check(cudaGetLastError(), "kernels");
  cublasHandle_t h;
  check(cublasCreate(&h), "cublasCreate");
  const int n = 8192;
  const double sgemm = gemm_gflops(h, CUDA_R_32F, CUBLAS_COMPUTE_32F, n);
  const double tf32_gemm = gemm_gflops(h, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, n);
  const double f16_gemm = gemm_gflops(h, CUDA_R_16F, CUBLAS_COMPUTE_32F, n);
  cublasDestroy(h);
  cudaFree(out);
  const double h2d = h2d_pinned_gb_per_s();
  std::printf(
      "{\"gpu_name\": \"%s\", \"peaks_gflop_per_s\": {\"fp32_fma\": %.0f, \"tf32_tensor\": %.0f, \"fp16_tensor\": %.0f},\n"
      " \"detail\": {\"ffma_loop\": %.0f, \"sgemm_8192\": %.0f, \"mma_sync_tf32_loop\": %.0f, \"tf32_gemm_8192\": %.0f,"
      " \"mma_sync_f16_loop\": %.0f, \"f16_gemm_8192_fp32_accumulate\": %.0f, \"h2d_pinned_gb_per_s\": %.1f,"
      " \"how\": \"median of 5 launches each; a unit's peak is the faster of its loop and cuBLAS\"}}\n",
      prop.name, std::max(ffma, sgemm), std::max(tf32_mma, tf32_gemm), std::max(f16_mma, f16_gemm), ffma, sgemm,
      tf32_mma, tf32_gemm, f16_mma, f16_gemm, h2d);
  return 0;
}
