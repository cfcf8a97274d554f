// What the OpenACC runtime (GCC's libgomp) runs on: an NVIDIA GPU through the nvptx plugin, or the host
// fallback. Queried once, so every session and the availability line say the same thing; the facts are
// described as omptarget's are (common/kernels/offload/offload_runtime.hpp).
#pragma once

#include "common/kernels/offload/offload_runtime.hpp"

namespace cnn::openacc {

using offload::RuntimeFacts;  // devices: acc_get_num_devices(acc_device_nvidia)

const RuntimeFacts& runtime_facts();

}  // namespace cnn::openacc
