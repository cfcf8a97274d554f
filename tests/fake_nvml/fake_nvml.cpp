// A stand-in for libnvidia-ml.so.1 with the five entry points suite/energy.cpp uses, for
// tests/test_system_info.cpp. Its machine is set through the environment, read at each call:
// FAKE_NVML_GPUS (how many GPUs, 2 if unset), FAKE_NVML_FAIL (the entry point that fails: "init", "count",
// "index", "energy"). GPU i sits on PCI bus "0000:0i:00.0" and has used (i + 1) J more at each reading.
// Built with FAKE_NVML_NO_ENERGY, it lacks the energy counter's entry point, as an older driver may.
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kNotFound = 6;
int devices[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
unsigned long long readings[10] = {};

bool fails(const char* entry) {
  const char* which = std::getenv("FAKE_NVML_FAIL");
  return which && std::strcmp(which, entry) == 0;
}

unsigned gpus() {
  const char* n = std::getenv("FAKE_NVML_GPUS");
  return n ? unsigned(std::atoi(n)) % 10 : 2;
}

}  // namespace

extern "C" {

int nvmlInit_v2() { return fails("init") ? kNotFound : kSuccess; }

int nvmlDeviceGetCount_v2(unsigned* count) {
  if (fails("count")) return kNotFound;
  *count = gpus();
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (fails("index") || index >= gpus()) return kInvalidArgument;
  *device = &devices[index];
  return kSuccess;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus, void** device) {
  for (unsigned i = 0; i < gpus(); ++i)
    if (std::string(bus) == "0000:0" + std::to_string(i) + ":00.0") {
      *device = &devices[i];
      return kSuccess;
    }
  return kNotFound;
}

#ifndef FAKE_NVML_NO_ENERGY
int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* mj) {
  if (fails("energy")) return kNotSupported;
  const int i = *static_cast<int*>(device);
  *mj = readings[i] += 1000ull * unsigned(i + 1);
  return kSuccess;
}
#endif
}
