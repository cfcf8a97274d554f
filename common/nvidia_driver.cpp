#include "common/nvidia_driver.hpp"

#include <dlfcn.h>

namespace cnn {

bool nvidia_driver_present() {
  void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib) ::dlclose(lib);
  return lib != nullptr;
}

}  // namespace cnn
