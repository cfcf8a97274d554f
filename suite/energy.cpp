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
  int (*count)(unsigned*) = nullptr;
  int (*by_index)(unsigned, NvmlDevice*) = nullptr;
  int (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  int (*energy_mj)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlDevice device = nullptr;
  std::string why_not;
};

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(::dlsym(lib, name));
}

// NVML numbers the GPUs by PCI bus, ignoring CUDA_VISIBLE_DEVICES (CUDA's device 0 may be any of them), so
// the run's GPU is found by its bus id; without one, only where NVML sees a single GPU.
Nvml open_nvml(const std::string& pci_bus_id, const std::string& library) {
  Nvml n;
  void* lib = ::dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL);  // kept open: the counter reads through it
  if (!lib) {
    n.why_not = "NVML not found (" + library + ")";
    return n;
  }
  n.init = symbol<decltype(n.init)>(lib, "nvmlInit_v2");
  n.count = symbol<decltype(n.count)>(lib, "nvmlDeviceGetCount_v2");
  n.by_index = symbol<decltype(n.by_index)>(lib, "nvmlDeviceGetHandleByIndex_v2");
  n.by_bus_id = symbol<decltype(n.by_bus_id)>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  n.energy_mj = symbol<decltype(n.energy_mj)>(lib, "nvmlDeviceGetTotalEnergyConsumption");
  unsigned gpus = 0;
  unsigned long long mj = 0;
  if (!n.init || !n.count || !n.by_index || !n.by_bus_id || !n.energy_mj)
    n.why_not = "NVML lacks the total-energy counter";
  else if (n.init() != 0 || n.count(&gpus) != 0)
    n.why_not = "NVML could not be initialised";
  else if (!pci_bus_id.empty() && n.by_bus_id(pci_bus_id.c_str(), &n.device) != 0)
    n.why_not = "NVML does not know the run's GPU (PCI bus " + pci_bus_id + ")";
  else if (pci_bus_id.empty() && gpus != 1)
    n.why_not = "the run's GPU has no PCI bus id to find it among NVML's " + std::to_string(gpus) + " GPUs";
  else if (pci_bus_id.empty() && n.by_index(0, &n.device) != 0)
    n.why_not = "NVML could not open its GPU";
  else if (n.energy_mj(n.device, &mj) != 0)
    n.why_not = "the run's GPU has no total-energy counter (NVML: not supported)";
  return n;
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
      if (!uj) {
        unreadable_ = p.energy_uj;
        return std::nullopt;
      }
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
  // The counter file of the last read() that failed on one.
  const std::string& unreadable() const { return unreadable_; }

 private:
  std::vector<RaplPackage> packages_;
  std::vector<double> last_;
  double total_uj_ = 0;
  std::string unreadable_;
};

}  // namespace

EnergyCounter EnergyCounter::gpu(const std::string& pci_bus_id, const std::string& library) {
  EnergyCounter c;
  c.source_ = "nvml";
  const Nvml n = open_nvml(pci_bus_id, library);
  c.why_not_ = n.why_not;
  if (c.why_not_.empty())
    c.read_ = [n]() -> std::optional<double> {
      unsigned long long mj = 0;
      if (n.energy_mj(n.device, &mj) != 0) return std::nullopt;
      return double(mj) / 1e3;
    };
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
  const auto sum = std::make_shared<RaplSum>(packages);
  if (!sum->read()) {  // the origin; a counter may be root only (Linux since late 2020: the Platypus fix)
    const std::string& file = sum->unreadable();
    c.why_not_ = "RAPL not readable (" + file + ": " +
                 (::access(file.c_str(), R_OK) != 0 ? "permission denied)" : "not a count)");
    return c;
  }
  c.read_ = [sum] { return sum->read(); };
  return c;
}

std::optional<double> EnergyCounter::joules() const {
  if (!read_) return std::nullopt;
  return read_();
}

}  // namespace cnn
