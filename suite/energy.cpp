#include "suite/energy.hpp"

#include <dlfcn.h>

#include <fstream>
#include <string>
#include <vector>

namespace cnn {
namespace {

// ---- NVML: the few entry points used, declared here (no nvml.h at build time).
using NvmlDevice = void*;
struct Nvml {
  int (*init)() = nullptr;
  int (*handle)(unsigned, NvmlDevice*) = nullptr;
  int (*energy_mj)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlDevice device = nullptr;
  std::string why_not;
};

const Nvml& nvml() {
  static const Nvml n = [] {
    Nvml n;
    void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib) {
      n.why_not = "NVML not found (libnvidia-ml.so.1)";
      return n;
    }
    n.init = reinterpret_cast<int (*)()>(::dlsym(lib, "nvmlInit_v2"));
    n.handle = reinterpret_cast<int (*)(unsigned, NvmlDevice*)>(::dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    n.energy_mj = reinterpret_cast<int (*)(NvmlDevice, unsigned long long*)>(
        ::dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
    unsigned long long mj = 0;
    if (!n.init || !n.handle || !n.energy_mj) n.why_not = "NVML lacks the total-energy counter";
    else if (n.init() != 0 || n.handle(0, &n.device) != 0) n.why_not = "NVML could not open GPU 0";
    else if (n.energy_mj(n.device, &mj) != 0) n.why_not = "GPU 0 has no total-energy counter (NVML: not supported)";
    return n;
  }();
  return n;
}

std::optional<double> read_nvml() {
  unsigned long long mj = 0;
  if (nvml().energy_mj(nvml().device, &mj) != 0) return std::nullopt;
  return double(mj) / 1e3;
}

// ---- RAPL: the package domains intel-rapl:N (AMD's RAPL appears under the same name).
std::vector<std::string> rapl_packages() {
  std::vector<std::string> dirs;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/class/powercap/intel-rapl:" + std::to_string(i);
    if (!std::ifstream(dir + "/energy_uj")) break;
    dirs.push_back(dir);
  }
  return dirs;
}

std::optional<double> read_uj(const std::string& file) {
  std::ifstream in(file);
  double uj = 0;
  if (!(in >> uj)) return std::nullopt;
  return uj;
}

std::optional<double> read_rapl() {
  double joules = 0;
  for (const std::string& dir : rapl_packages()) {
    const auto uj = read_uj(dir + "/energy_uj");
    if (!uj) return std::nullopt;
    joules += *uj / 1e6;
  }
  return joules;
}

}  // namespace

EnergyCounter EnergyCounter::gpu() {
  EnergyCounter c;
  c.source_ = "nvml";
  c.why_not_ = nvml().why_not;
  if (c.why_not_.empty()) c.read_ = read_nvml;
  return c;
}

EnergyCounter EnergyCounter::cpu() {
  EnergyCounter c;
  c.source_ = "rapl";
  const auto packages = rapl_packages();
  if (packages.empty()) c.why_not_ = "RAPL not readable (no /sys/class/powercap/intel-rapl:0/energy_uj)";
  else if (!read_rapl()) c.why_not_ = "RAPL not readable (energy_uj: permission denied)";
  else c.read_ = read_rapl;
  return c;
}

std::optional<double> EnergyCounter::joules() const {
  if (!read_) return std::nullopt;
  return read_();
}

}  // namespace cnn
