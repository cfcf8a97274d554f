#include "backends/omptarget/omptarget_runtime.hpp"

#include <omp.h>
#include <openacc.h>

#include <cstdlib>

#include "common/kernels/offload/offload_gpu_facts.hpp"

namespace cnn::omptarget {

const RuntimeFacts& runtime_facts() {
  static const RuntimeFacts facts = [] {
    // Without libgomp's nvptx plugin (or without libcuda / a GPU) there is no device and target regions
    // run on the host; OMP_TARGET_OFFLOAD=DISABLED forces that.
    const int devices = omp_get_num_devices();
    // libgomp lets OpenMP use a device that its OpenACC runtime initialised, but aborts the program
    // ("libgomp: device already active") when OpenACC comes to a device OpenMP initialised first, as in
    // `--backend omptarget,openacc`. So the device is initialised through OpenACC's door, whether or not this
    // program has OpenACC code: acc_set_device_num (unlike acc_init) initialises only a device nobody has
    // yet, and the OpenACC runtime then takes it as its own. -1 and acc_device_default: ACC_DEVICE_NUM and
    // ACC_DEVICE_TYPE as the user set them.
    if (SUITE_OMPTARGET_OFFLOAD_TARGET[0] != '\0' && devices > 0) acc_set_device_num(-1, acc_device_default);
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
    // Without the GPU's name (which OpenMP's API cannot give) the report's platform is an unknown GPU wherever
    // no CUDA backend ran beside it.
    if (f.on_gpu) offload::add_gpu_facts(f.info);
    if (const char* policy = std::getenv("OMP_TARGET_OFFLOAD")) f.info.emplace_back("OMP_TARGET_OFFLOAD", policy);
    return f;
  }();
  return facts;
}

}  // namespace cnn::omptarget
