#include "common/kernels/cuda/cuda_support.hpp"

#include "common/errors.hpp"
#include "common/nvidia_driver.hpp"

namespace cnn::cuda {

void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  throw SuiteError(kExitOther, std::string("cuda: ") + what + ": " + cudaGetErrorString(err));
}

void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls work
    throw SuiteError(kExitOther, "cuda: out of GPU memory allocating " + std::to_string(bytes) +
                                     " bytes (try a smaller --batch)");
  }
  check(err, "cudaMalloc");
  return p;
}

Availability availability() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    if (!nvidia_driver_present()) return {false, "no CUDA device: no NVIDIA driver (libcuda.so.1 not found)", ""};
    return {false, std::string("no CUDA device (cudaGetDeviceCount: ") +
                       (err == cudaSuccess ? "0 devices" : cudaGetErrorString(err)) + ")",
            ""};
  }
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  return {true, "", p.name};
}

std::vector<std::pair<std::string, std::string>> device_info() {
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  std::vector<std::pair<std::string, std::string>> info{
      {"gpu_name", p.name},
      {"gpu_compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
      {"gpu_multiprocessors", std::to_string(p.multiProcessorCount)},
      {"gpu_memory_bytes", std::to_string(p.totalGlobalMem)},
      {"driver_version", version(driver)},
      {"cuda_runtime_version", version(runtime)}};
  // Which of the machine's GPUs device 0 is (CUDA_VISIBLE_DEVICES may name any): NVML finds it by this.
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, 0) == cudaSuccess) info.emplace_back("gpu_pci_bus_id", bus);
  return info;
}

EventTimer::EventTimer() {
  check(cudaEventCreate(&start_), "cudaEventCreate");
  check(cudaEventCreate(&stop_), "cudaEventCreate");
}
EventTimer::~EventTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}
void EventTimer::start(cudaStream_t s) { check(cudaEventRecord(start_, s), "cudaEventRecord"); }
void EventTimer::stop(cudaStream_t s) { check(cudaEventRecord(stop_, s), "cudaEventRecord"); }
double EventTimer::ms() const {
  check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  return ms;
}

}  // namespace cnn::cuda
