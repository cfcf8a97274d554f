// Where the directive-based backends' regions run (GCC's libgomp serves both OpenACC and OpenMP target): an
// NVIDIA GPU through the nvptx plugin, or the host fallback. Each backend asks its own runtime once
// (openacc_runtime.cpp, omptarget_runtime.cpp); describe_runtime() turns the answers into the same
// availability line and device_info keys, so the two backends report alike. Header-only, no pragmas (see
// offload_session.hpp for why); inline, so a copy in the executable and one in libomptarget_offload.so
// are the same definition.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cnn::offload {

using FactList = std::vector<std::pair<std::string, std::string>>;

struct RuntimeFacts {
  bool on_gpu = false;  // built with nvptx offload and the runtime's probe found the regions on a GPU
  int devices = 0;      // the runtime's device count (acc_get_num_devices / omp_get_num_devices)
  std::string device;   // the availability line
  FactList info;        // for Session::device_info()
};

// What one backend's runtime said, and how to name it.
struct RuntimeProbe {
  const char* device_key;      // "openacc_device": the key of the availability line in info
  const char* count_call;      // "acc_get_num_devices": the device count's name in the availability line
  int devices;                 // its value
  bool ran_on_gpu;             // the runtime's own test (device type, or a probe region)
  FactList runtime_info;       // the runtime's own facts, listed after the availability line
  const char* version_key;     // "openacc_version"
  long version;                // _OPENACC / _OPENMP
  const char* flag;            // "-fopenacc"
  const char* offload_target;  // SUITE_<BACKEND>_OFFLOAD_TARGET: "nvptx-none -misa=sm_80", "" when host-only
};

inline RuntimeFacts describe_runtime(RuntimeProbe p) {
  RuntimeFacts f;
  const bool built_with_offload = p.offload_target[0] != '\0';
  f.devices = p.devices;
  f.on_gpu = built_with_offload && p.ran_on_gpu;
  const std::string count = std::string(p.count_call) + " = " + std::to_string(p.devices);
  if (f.on_gpu)
    f.device = "NVIDIA GPU via nvptx offload (" + count + ")";
  else if (built_with_offload)
    f.device = "host fallback (no offload device; " + count + ")";
  else
    f.device = "host fallback (built without nvptx offload)";

  f.info.emplace_back(p.device_key, f.device);
  for (auto& kv : p.runtime_info) f.info.push_back(std::move(kv));
  f.info.emplace_back(p.version_key, std::to_string(p.version));
  f.info.emplace_back("compiler", std::string("GCC " __VERSION__ " ") + p.flag);
  f.info.emplace_back("offload_target", built_with_offload ? p.offload_target : "none (host only)");
  return f;
}

}  // namespace cnn::offload
