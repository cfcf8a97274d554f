// Whether NVIDIA's driver library (libcuda.so.1) can be loaded: without it the CUDA runtime says "driver
// version is insufficient", which misleads on a machine that has no NVIDIA driver at all. The GPU backends
// ask it to say why they cannot run.
#pragma once

namespace cnn {

bool nvidia_driver_present();

}  // namespace cnn
