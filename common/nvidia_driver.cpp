#include "common/nvidia_driver.hpp"

#include <dlfcn.h>

namespace cnn {

bool nvidia_driver_present() {
  void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib) ::dlclose(lib);
  return lib != nullptr;
}

std::string nvidia_pci_bus_id(int ordinal) {
  void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return "";
  // The driver API's entry points, as its header declares them (CUdevice is an int, CUresult 0 is success).
  const auto init = reinterpret_cast<int (*)(unsigned)>(::dlsym(lib, "cuInit"));
  const auto get = reinterpret_cast<int (*)(int*, int)>(::dlsym(lib, "cuDeviceGet"));
  const auto bus_id = reinterpret_cast<int (*)(char*, int, int)>(::dlsym(lib, "cuDeviceGetPCIBusId"));
  char bus[32] = {};
  int device = 0;
  const bool ok = init && get && bus_id && init(0) == 0 && get(&device, ordinal) == 0 &&
                  bus_id(bus, int(sizeof bus) - 1, device) == 0;
  ::dlclose(lib);
  return ok ? bus : "";
}

}  // namespace cnn
