#include "backends/openacc/openacc_runtime.hpp"

#include <openacc.h>

namespace cnn::openacc {
namespace {

#ifdef SUITE_OPENACC_OFFLOAD_TARGET
constexpr const char* kOffloadTarget = SUITE_OPENACC_OFFLOAD_TARGET;
#else
constexpr const char* kOffloadTarget = "";
#endif

std::string device_type_name(acc_device_t t) {
  switch (t) {
    case acc_device_nvidia: return "acc_device_nvidia";
    case acc_device_host: return "acc_device_host";
    case acc_device_none: return "acc_device_none";
    default: return "acc_device_t " + std::to_string(int(t));
  }
}

RuntimeFacts query() {
  RuntimeFacts f;
  const bool built_with_offload = kOffloadTarget[0] != '\0';
  // Without libgomp's nvptx plugin (or without libcuda / a GPU) this is 0 and the runtime picks the host.
  f.nvidia_devices = acc_get_num_devices(acc_device_nvidia);
  const acc_device_t type = acc_get_device_type();  // honours ACC_DEVICE_TYPE=host
  f.on_gpu = built_with_offload && type == acc_device_nvidia && f.nvidia_devices > 0;
  const std::string count = "acc_get_num_devices = " + std::to_string(f.nvidia_devices);
  if (f.on_gpu)
    f.device = "NVIDIA GPU via nvptx offload (" + count + ")";
  else if (built_with_offload)
    f.device = "host fallback (no offload device; " + count + ")";
  else
    f.device = "host fallback (built without nvptx offload)";

  f.info.emplace_back("openacc_device", f.device);
  f.info.emplace_back("acc_get_device_type", device_type_name(type));
  f.info.emplace_back("acc_get_num_devices(acc_device_nvidia)", std::to_string(f.nvidia_devices));
  f.info.emplace_back("openacc_version", std::to_string(_OPENACC));
  f.info.emplace_back("compiler", "GCC " __VERSION__ " -fopenacc");
  f.info.emplace_back("offload_target", built_with_offload ? kOffloadTarget : "none (host only)");
  if (f.on_gpu) {
    // Only asked when a GPU is there: libgomp aborts on property queries for an absent device type.
    const int dev = acc_get_device_num(acc_device_nvidia);
    if (const char* name = acc_get_property_string(dev, acc_device_nvidia, acc_property_name))
      f.info.emplace_back("gpu_name", name);
    if (const char* drv = acc_get_property_string(dev, acc_device_nvidia, acc_property_driver))
      f.info.emplace_back("driver", drv);
    f.info.emplace_back("gpu_memory_bytes",
                        std::to_string(acc_get_property(dev, acc_device_nvidia, acc_property_memory)));
  }
  return f;
}

}  // namespace

const RuntimeFacts& runtime_facts() {
  static const RuntimeFacts facts = query();
  return facts;
}

}  // namespace cnn::openacc
