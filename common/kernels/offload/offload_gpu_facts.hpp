// The facts of the GPU that libgomp's nvptx plugin runs the directive-based backends on, for their
// device_info: OpenACC's property queries (OpenMP's API has none, so the OpenMP offload backend asks through
// OpenACC's door too, of the device it initialised) and the driver library's PCI bus id (libgomp numbers the
// GPUs as CUDA does), by which the energy counter finds the GPU. Only where a GPU is there: libgomp aborts on
// property queries for an absent device type. Inline, as offload_runtime.hpp, for the executable and
// libomptarget_offload.so alike.
#pragma once

#include <openacc.h>

#include <string>

#include "common/kernels/offload/offload_runtime.hpp"
#include "common/nvidia_driver.hpp"

namespace cnn::offload {

inline void add_gpu_facts(FactList& info) {
  const int dev = acc_get_device_num(acc_device_nvidia);
  if (const char* name = acc_get_property_string(dev, acc_device_nvidia, acc_property_name))
    info.emplace_back("gpu_name", name);
  if (const char* driver = acc_get_property_string(dev, acc_device_nvidia, acc_property_driver))
    info.emplace_back("driver", driver);
  info.emplace_back("gpu_memory_bytes", std::to_string(acc_get_property(dev, acc_device_nvidia, acc_property_memory)));
  if (const std::string bus = nvidia_pci_bus_id(dev); !bus.empty()) info.emplace_back("gpu_pci_bus_id", bus);
}

}  // namespace cnn::offload
