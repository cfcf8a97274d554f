#include "backends/omptarget/omptarget_runtime.hpp"

#include <omp.h>

#include <cstdlib>

namespace cnn::omptarget {

const RuntimeFacts& runtime_facts() {
  static const RuntimeFacts facts = [] {
    // Without libgomp's nvptx plugin (or without libcuda / a GPU) there is no device and target regions
    // run on the host; OMP_TARGET_OFFLOAD=DISABLED forces that.
    const int devices = omp_get_num_devices();
    int ran_on_host = 1;
#pragma omp target map(from : ran_on_host)
    ran_on_host = omp_is_initial_device();
    RuntimeFacts f = offload::describe_runtime({
        .device_key = "omptarget_device",
        .count_call = "omp_get_num_devices",
        .devices = devices,
        .ran_on_gpu = !ran_on_host,
        .runtime_info = {{"omp_get_num_devices", std::to_string(devices)},
                         {"omp_get_default_device", std::to_string(omp_get_default_device())},
                         {"probe_region_ran_on", ran_on_host ? "host (omp_is_initial_device = 1)"
                                                             : "device (omp_is_initial_device = 0)"}},
        .version_key = "openmp_version",
        .version = _OPENMP,
        .flag = "-fopenmp",
        .offload_target = SUITE_OMPTARGET_OFFLOAD_TARGET,
    });
    if (const char* policy = std::getenv("OMP_TARGET_OFFLOAD")) f.info.emplace_back("OMP_TARGET_OFFLOAD", policy);
    return f;
  }();
  return facts;
}

}  // namespace cnn::omptarget
