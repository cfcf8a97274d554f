#include "backends/omptarget/omptarget_runtime.hpp"

#include <omp.h>
#include <openacc.h>

#include <cstdlib>

namespace cnn::omptarget {
namespace {

#ifdef SUITE_OMPTARGET_OFFLOAD_TARGET
constexpr const char* kOffloadTarget = SUITE_OMPTARGET_OFFLOAD_TARGET;
#else
constexpr const char* kOffloadTarget = "";
#endif

RuntimeFacts query() {
  RuntimeFacts f;
  const bool built_with_offload = kOffloadTarget[0] != '\0';
  // Without libgomp's nvptx plugin (or without libcuda / a GPU) there is no device and target regions
  // run on the host; OMP_TARGET_OFFLOAD=DISABLED forces that.
  f.devices = omp_get_num_devices();
  // libgomp lets OpenMP use a device that its OpenACC runtime initialised, but aborts the program
  // ("libgomp: device already active") when OpenACC comes to a device OpenMP initialised first, as in
  // `--backend omptarget,openacc`. So the device is initialised through OpenACC's door, whether or not this
  // program has OpenACC code: acc_set_device_num (unlike acc_init) initialises only a device nobody has yet,
  // and the OpenACC runtime then takes it as its own. -1 and acc_device_default: ACC_DEVICE_NUM and
  // ACC_DEVICE_TYPE as the user set them.
  if (built_with_offload && f.devices > 0) acc_set_device_num(-1, acc_device_default);
  int ran_on_host = 1;
#pragma omp target map(from : ran_on_host)
  ran_on_host = omp_is_initial_device();
  f.on_gpu = built_with_offload && !ran_on_host;
  const std::string count = "omp_get_num_devices = " + std::to_string(f.devices);
  if (f.on_gpu)
    f.device = "NVIDIA GPU via nvptx offload (" + count + ")";
  else if (built_with_offload)
    f.device = "host fallback (no offload device; " + count + ")";
  else
    f.device = "host fallback (built without nvptx offload)";

  f.info.emplace_back("omptarget_device", f.device);
  f.info.emplace_back("omp_get_num_devices", std::to_string(f.devices));
  f.info.emplace_back("omp_get_default_device", std::to_string(omp_get_default_device()));
  f.info.emplace_back("probe_region_ran_on", ran_on_host ? "host (omp_is_initial_device = 1)"
                                                         : "device (omp_is_initial_device = 0)");
  f.info.emplace_back("openmp_version", std::to_string(_OPENMP));
  f.info.emplace_back("compiler", "GCC " __VERSION__ " -fopenmp");
  f.info.emplace_back("offload_target", built_with_offload ? kOffloadTarget : "none (host only)");
  if (const char* policy = std::getenv("OMP_TARGET_OFFLOAD")) f.info.emplace_back("OMP_TARGET_OFFLOAD", policy);
  return f;
}

}  // namespace

const RuntimeFacts& runtime_facts() {
  static const RuntimeFacts facts = query();
  return facts;
}

}  // namespace cnn::omptarget
