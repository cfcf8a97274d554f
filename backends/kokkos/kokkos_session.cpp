#include "backends/kokkos/kokkos_session.hpp"

#include "common/errors.hpp"
#include "common/nvidia_driver.hpp"
#include "common/text.hpp"

#include <cstdlib>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

namespace cnn::kokkos {

// What Kokkos::initialize would not survive, or would stop the process over with several lines: one line instead.
void check_thread_count(int threads) {
  const char* v = std::getenv("KOKKOS_NUM_THREADS");  // digits only: bad_environment() refused anything else
  const long from_env = v ? std::strtol(v, nullptr, 10) : 0;
#if defined(KOKKOS_ENABLE_OPENMP)
  if constexpr (std::is_same_v<Space, Kokkos::OpenMP>) {
    constexpr int kMax = Kokkos::Impl::OpenMPExec::MAX_THREAD_COUNT;  // its per-thread data; beyond it, heap corruption
    const long used = threads > 0 ? threads : v ? from_env : omp_get_max_threads();
    if (used > kMax)
      throw UsageError(std::to_string(used) + " threads: Kokkos::OpenMP runs at most " + std::to_string(kMax) +
                       " (--threads, OMP_NUM_THREADS or KOKKOS_NUM_THREADS)");
  }
#endif
  if (v && threads > 0 && from_env != threads)
    throw UsageError(std::string("KOKKOS_NUM_THREADS=") + display(v) + " differs from this run's " + std::to_string(threads) +
                     " threads (--threads, OMP_NUM_THREADS or every logical core), which Kokkos refuses: unset it");
}

// The bytes Kokkos holds in a GPU space's memory, now and at most since the last session opened: Kokkos Tools'
// allocation callbacks see every View and Kokkos' own buffers (team scratch in global memory, reductions).
// Kokkos keeps its scratch once grown, so a session's peak includes the scratch that an earlier session of the
// process grew (on the H200: about 2 GB after kokkos:winograd_lanes, results/h200/checks-device-memory/).
// Installed only where the space is a GPU's: with a callback set, every launch asks Kokkos for its name.
namespace {
std::unordered_map<const void*, std::uint64_t> g_device_allocations;  // only those seen allocated
std::uint64_t g_device_held = 0, g_device_peak = 0;

void count_allocation(const Kokkos::Tools::SpaceHandle space, const char*, const void* p, const std::uint64_t size) {
  if (std::string_view(space.name) != Space::memory_space::name()) return;
  g_device_allocations[p] = size;
  g_device_held += size;
  g_device_peak = std::max(g_device_peak, g_device_held);
}
void count_deallocation(const Kokkos::Tools::SpaceHandle, const char*, const void* p, const std::uint64_t) {
  const auto it = g_device_allocations.find(p);
  if (it == g_device_allocations.end()) return;
  g_device_held -= it->second;
  g_device_allocations.erase(it);
}
}  // namespace

void ensure_initialised(int threads) {
  if (Kokkos::is_initialized()) return;
  check_thread_count(threads);
  Kokkos::InitArguments args;
  if (threads > 0) args.num_threads = threads;
  args.disable_warnings = true;  // its several-line notes (more threads than cores) would break the one-line stderr
  Kokkos::initialize(args);
  if constexpr (!kHostSpace) {
    Kokkos::Tools::Experimental::set_allocate_data_callback(count_allocation);
    Kokkos::Tools::Experimental::set_deallocate_data_callback(count_deallocation);
  }
  // Sessions (and their Views) are gone by the time atexit handlers run.
  std::atexit([] { Kokkos::finalize(); });
}

std::string space_name() { return Space::name(); }

// Kokkos::initialize reads these and stops the process with a several-line message on a bad value, which
// would come after other backends had run: check them when the backend is selected instead.
std::string bad_environment() {
  for (const char* name : {"KOKKOS_NUM_THREADS", "KOKKOS_DEVICE_ID"}) {
    const char* v = std::getenv(name);
    if (!v) continue;
    const std::string s = v;
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
      return std::string(name) + "='" + display(s) + "' is not a non-negative integer";
  }
  return {};
}

// The report's device: the space, and once Kokkos runs, what it runs on ("Kokkos::OpenMP, 2 threads",
// "Kokkos::Cuda, NVIDIA H200"). Before (suite --list) the thread count is not known yet.
std::string device_name() {
  std::string device = "Kokkos::" + space_name();
  if (!Kokkos::is_initialized()) return device;
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, Kokkos::Cuda().cuda_device()) == cudaSuccess) device += std::string(", ") + p.name;
    return device;
  }
#endif
  const int threads = Space().concurrency();
  return device + ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

Availability availability() {
  const std::string space = device_name();
  if (const std::string why = bad_environment(); !why.empty()) return {false, why, space};
#if defined(KOKKOS_ENABLE_CUDA)
  // Kokkos::initialize aborts the process without a GPU; say so before anyone calls it.
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    int devices = 0;
    const cudaError_t e = cudaGetDeviceCount(&devices);
    if ((e != cudaSuccess || devices == 0) && !nvidia_driver_present())
      return {false, "no CUDA device for " + space + ": no NVIDIA driver (libcuda.so.1 not found)", space};
    if (e != cudaSuccess || devices == 0)
      return {false, "no CUDA device for " + space + (e != cudaSuccess ? std::string(" (") + cudaGetErrorString(e) + ")" : ""),
              space};
  }
#endif
  return {true, "", space};
}

Floats to_view(const std::vector<float>& host, const char* label) {
  Floats v(std::string(label), host.size());
  auto mirror = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < host.size(); ++i) mirror(i) = host[i];
  Kokkos::deep_copy(v, mirror);
  return v;
}

KokkosSession::KokkosSession(const Network& net, const RunConfig& config, std::size_t preferred_batch)
    : batch_(resolve_batch(config, preferred_batch)) {
  ensure_initialised(config.threads);
  g_device_peak = g_device_held;  // one session at a time: its peak starts from what is held already
  for (int l = 0; l < 3; ++l) {
    w_[l] = to_view(net.conv(l).weights, "conv_w");
    b_[l] = to_view(net.conv(l).bias, "conv_b");
  }
  fc_w_ = to_view(net.fc.weights, "fc_w");
  fc_b_ = to_view(net.fc.bias, "fc_b");
}

double KokkosSession::upload(const std::uint8_t* pixels, std::size_t n) {
  const StopWatch t0;
  n_ = n;
  pixels_ = Bytes(Kokkos::view_alloc(Kokkos::WithoutInitializing, "pixels"), n * kImageBytes);
  Kokkos::View<const std::uint8_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host(pixels, n * kImageBytes);
  Kokkos::deep_copy(pixels_, host);
  probs_ = Floats(std::string("probs"), n * kClasses);
  Kokkos::fence();
  return t0.ms();
}

double KokkosSession::download(float* probs) {
  const StopWatch t0;
  Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host(probs, n_ * kClasses);
  Kokkos::deep_copy(host, probs_);
  Kokkos::fence();
  return t0.ms();
}

bool KokkosSession::on_device() const { return !kHostSpace; }

std::size_t KokkosSession::device_memory_bytes() const { return kHostSpace ? 0 : g_device_peak; }

std::vector<std::pair<std::string, std::string>> KokkosSession::device_info() const {
  std::vector<std::pair<std::string, std::string>> info{{"kokkos_execution_space", space_name()},
                                                        {"kokkos_version", std::to_string(KOKKOS_VERSION)},
                                                        {"kokkos_concurrency", std::to_string(Space().concurrency())}};
#ifdef KOKKOS_ENABLE_CUDA
  // The GPU the run used, named as the cuda backend names it: the report tools place GPU runs by it.
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, Kokkos::Cuda().cuda_device()) == cudaSuccess) {
    info.emplace_back("gpu_name", prop.name);
    info.emplace_back("gpu_compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor));
  }
  char bus[32] = {};  // as cuda::device_info gives it, for NVML's energy counter
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, Kokkos::Cuda().cuda_device()) == cudaSuccess)
    info.emplace_back("gpu_pci_bus_id", bus);
#endif
  return info;
}

}  // namespace cnn::kokkos
