// Where the OpenMP target regions run (GCC's libgomp): an NVIDIA GPU through the nvptx plugin, or the
// host fallback. Decided once by running a probe region and asking it omp_is_initial_device(), so every
// session and the availability line say the same thing; the facts are described as openacc's are
// (common/kernels/offload/offload_runtime.hpp).
#pragma once

#include "common/kernels/offload/offload_runtime.hpp"

namespace cnn::omptarget {

using offload::RuntimeFacts;  // devices: omp_get_num_devices()

const RuntimeFacts& runtime_facts();

}  // namespace cnn::omptarget
