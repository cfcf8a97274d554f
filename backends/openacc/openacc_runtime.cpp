#include "backends/openacc/openacc_runtime.hpp"

#include <openacc.h>

#include <string>

#include "common/kernels/offload/offload_gpu_facts.hpp"

namespace cnn::openacc {
namespace {

std::string device_type_name(acc_device_t t) {
  switch (t) {
    case acc_device_nvidia: return "acc_device_nvidia";
    case acc_device_host: return "acc_device_host";
    case acc_device_none: return "acc_device_none";
    default: return "acc_device_t " + std::to_string(int(t));
  }
}

}  // namespace

const RuntimeFacts& runtime_facts() {
  static const RuntimeFacts facts = [] {
    // Without libgomp's nvptx plugin (or without libcuda / a GPU) this is 0 and the runtime picks the host.
    const int nvidia = acc_get_num_devices(acc_device_nvidia);
    const acc_device_t type = acc_get_device_type();  // honours ACC_DEVICE_TYPE=host
    RuntimeFacts f = offload::describe_runtime({
        .device_key = "openacc_device",
        .count_call = "acc_get_num_devices",
        .devices = nvidia,
        .ran_on_gpu = type == acc_device_nvidia && nvidia > 0,
        .runtime_info = {{"acc_get_device_type", device_type_name(type)},
                         {"acc_get_num_devices(acc_device_nvidia)", std::to_string(nvidia)}},
        .version_key = "openacc_version",
        .version = _OPENACC,
        .flag = "-fopenacc",
        .offload_target = SUITE_OPENACC_OFFLOAD_TARGET,
    });
    if (f.on_gpu) offload::add_gpu_facts(f.info);
    return f;
  }();
  return facts;
}

}  // namespace cnn::openacc
