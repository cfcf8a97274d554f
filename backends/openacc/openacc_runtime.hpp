// What the OpenACC runtime (GCC's libgomp) runs on: an NVIDIA GPU through the nvptx plugin, or the host
// fallback. Queried once, so every session and the availability line say the same thing.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cnn::openacc {

struct RuntimeFacts {
  bool on_gpu = false;      // acc_get_device_type() == acc_device_nvidia
  int nvidia_devices = 0;   // acc_get_num_devices(acc_device_nvidia)
  std::string device;       // the availability line
  std::vector<std::pair<std::string, std::string>> info;  // for Session::device_info()
};

const RuntimeFacts& runtime_facts();

}  // namespace cnn::openacc
