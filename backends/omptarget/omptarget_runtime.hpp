// Where the OpenMP target regions run (GCC's libgomp): an NVIDIA GPU through the nvptx plugin, or the
// host fallback. Decided once by running a probe region and asking it omp_is_initial_device(), so every
// session and the availability line say the same thing.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cnn::omptarget {

struct RuntimeFacts {
  bool on_gpu = false;  // the probe region ran on a device, not on the host
  int devices = 0;      // omp_get_num_devices()
  std::string device;   // the availability line
  std::vector<std::pair<std::string, std::string>> info;  // for Session::device_info()
};

const RuntimeFacts& runtime_facts();

}  // namespace cnn::omptarget
