// Energy around the timed passes of a run: NVML's total-energy counter of the run's GPU for runs on a device,
// RAPL's package counter (/sys/class/powercap) for runs on the host. Neither needs a header or a library at
// build time (NVML is loaded with dlopen), and either may be missing: then the reason is recorded instead.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace cnn {

class EnergyCounter {
 public:
  // The GPU on PCI bus `pci_bus_id` ("0000:1b:00.0"; "": NVML's only GPU) through NVML (`library`), or the CPU
  // packages through RAPL under `powercap` (other libraries and folders only in tests).
  static EnergyCounter gpu(const std::string& pci_bus_id, const std::string& library = "libnvidia-ml.so.1");
  static EnergyCounter cpu(const std::string& powercap = "/sys/class/powercap");

  bool available() const { return why_not_.empty(); }
  const std::string& source() const { return source_; }    // "nvml", "rapl"
  const std::string& why_not() const { return why_not_; }  // empty when available
  // Joules since an arbitrary origin, never less than an earlier reading of this counter or its copies; nullopt
  // when the counter cannot be read. RAPL's counters wrap (at max_energy_range_uj, some 10^5 J): a wrap between
  // two readings is counted, as one.
  std::optional<double> joules() const;

 private:
  std::string source_, why_not_;
  std::function<std::optional<double>()> read_;
};

}  // namespace cnn
