#include "suite/energy.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <utility>
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
std::optional<double> read_number(const std::string& file) {
  std::ifstream in(file);
  double v = 0;
  if (!(in >> v) || !(v >= 0)) return std::nullopt;
  return v;
}

struct RaplPackage {
  std::string energy_uj;  // the counter's file
  double range_uj = 0;    // where it wraps to 0 (max_energy_range_uj)
};

std::vector<RaplPackage> rapl_packages(const std::string& powercap) {
  std::vector<RaplPackage> packages;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = powercap + "/intel-rapl:" + std::to_string(i);
    if (::access((dir + "/energy_uj").c_str(), F_OK) != 0) break;
    packages.push_back({dir + "/energy_uj", read_number(dir + "/max_energy_range_uj").value_or(0)});
  }
  return packages;
}

// The packages' counters summed since the first reading, each wrap between two readings added back.
class RaplSum {
 public:
  explicit RaplSum(std::vector<RaplPackage> packages) : packages_(std::move(packages)) {}
  std::optional<double> read() {
    std::vector<double> now;
    for (const RaplPackage& p : packages_) {
      const auto uj = read_number(p.energy_uj);
      if (!uj) return std::nullopt;
      now.push_back(*uj);
    }
    double steps = 0;
    for (std::size_t i = 0; i < now.size() && !last_.empty(); ++i) {
      double step = now[i] - last_[i];
      if (step < 0) {
        if (!(packages_[i].range_uj > last_[i])) return std::nullopt;  // a wrap of unknown size
        step += packages_[i].range_uj;
      }
      steps += step;
    }
    total_uj_ += steps;
    last_ = std::move(now);
    return total_uj_ / 1e6;
  }

 private:
  std::vector<RaplPackage> packages_;
  std::vector<double> last_;
  double total_uj_ = 0;
};

}  // namespace

EnergyCounter EnergyCounter::gpu() {
  EnergyCounter c;
  c.source_ = "nvml";
  c.why_not_ = nvml().why_not;
  if (c.why_not_.empty()) c.read_ = read_nvml;
  return c;
}

EnergyCounter EnergyCounter::cpu(const std::string& powercap) {
  EnergyCounter c;
  c.source_ = "rapl";
  const auto packages = rapl_packages(powercap);
  if (packages.empty()) {
    c.why_not_ = "RAPL not readable (no " + powercap + "/intel-rapl:0/energy_uj)";
    return c;
  }
  for (const RaplPackage& p : packages)
    if (!read_number(p.energy_uj)) {  // root only on kernels since late 2020 (the Platypus fix)
      c.why_not_ = "RAPL not readable (" + p.energy_uj + ": " +
                   (::access(p.energy_uj.c_str(), R_OK) != 0 ? "permission denied)" : "not a number)");
      return c;
    }
  const auto sum = std::make_shared<RaplSum>(packages);
  sum->read();  // the origin
  c.read_ = [sum] { return sum->read(); };
  return c;
}

std::optional<double> EnergyCounter::joules() const {
  if (!read_) return std::nullopt;
  return read_();
}

}  // namespace cnn
