// What the CUDA-based backends share: error checks that throw the suite's errors, device facts,
// CUDA-event timing and NVTX ranges.
#pragma once

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <string>
#include <utility>
#include <vector>

#include "common/backend.hpp"

namespace cnn::cuda {

// Throws SuiteError (exit 1) naming what failed; an allocation failure says how much was asked for.
void check(cudaError_t err, const char* what);
void* device_alloc(std::size_t bytes);  // cudaMalloc or a clear out-of-memory error

// Lets `kernel` launch with `bytes` of dynamic shared memory (more than the 48 KB a kernel gets by default).
template <class Kernel>
void allow_shared_memory(Kernel* kernel, std::size_t bytes) {
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)), "shared memory size");
}

// Launches kernel<<<blocks, threads, shared, s>>>(args...) so that it may start before the kernel ahead of it
// on `s` has finished (programmatic dependent launch): its blocks take the SMs that the previous kernel's
// blocks leave once all of those have called allow_next_kernel(), run what does not need the previous
// kernel's results (weights into registers, zeroed buffers), and wait for the rest in wait_for_previous_kernel()
// (cuda_kernels.cuh).
template <class... Params, class... Args>
void launch_after_previous(void (*kernel)(Params...), int blocks, int threads, std::size_t shared, cudaStream_t s,
                           Args... args) {
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  const cudaLaunchConfig_t config{dim3(blocks), dim3(threads), shared, s, &overlap, 1};
  check(cudaLaunchKernelEx(&config, kernel, Params(args)...), "cudaLaunchKernelEx");
}

Availability availability();  // runnable only with a CUDA device: otherwise says why
std::vector<std::pair<std::string, std::string>> device_info();

// RAII NVTX range, so nsys shows backend/variant/layer names.
class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

// A pair of CUDA events around work on a stream; ms() waits for the stop event.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(cudaStream_t s = nullptr);
  void stop(cudaStream_t s = nullptr);
  double ms() const;

 private:
  cudaEvent_t start_, stop_;
};

}  // namespace cnn::cuda
