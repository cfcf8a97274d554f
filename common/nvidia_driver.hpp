// Whether NVIDIA's driver library (libcuda.so.1) can be loaded: without it the CUDA runtime says "driver
// version is insufficient", which misleads on a machine that has no NVIDIA driver at all. The GPU backends
// ask it to say why they cannot run.
#pragma once

#include <string>

namespace cnn {

bool nvidia_driver_present();

// The PCI bus id ("0000:1b:00.0") of CUDA device `ordinal` (as CUDA_VISIBLE_DEVICES numbers them), through the
// driver library: for the GPU backends that use no CUDA runtime (OpenACC, OpenMP offload), so that the energy
// counter finds their GPU. "" where there is no driver or no such device.
std::string nvidia_pci_bus_id(int ordinal);

}  // namespace cnn
