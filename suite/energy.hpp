// Energy around the timed passes of a run: NVML's total-energy counter of GPU 0 for runs on a device,
// RAPL's package counter (/sys/class/powercap) for runs on the host. Neither needs a header or a library at
// build time (NVML is loaded with dlopen), and either may be missing: then the reason is recorded instead.
#pragma once

#include <optional>
#include <string>

namespace cnn {

class EnergyCounter {
 public:
  // GPU 0 through NVML (libnvidia-ml.so.1), or the CPU packages through RAPL.
  static EnergyCounter gpu();
  static EnergyCounter cpu();

  bool available() const { return why_not_.empty(); }
  const std::string& source() const { return source_; }    // "nvml", "rapl"
  const std::string& why_not() const { return why_not_; }  // empty when available
  // Joules since an arbitrary origin; nullopt when the counter cannot be read. (RAPL's counter wraps after
  // some 10^5 J: a later reading below an earlier one is no measurement.)
  std::optional<double> joules() const;

 private:
  std::string source_, why_not_;
  std::optional<double> (*read_)() = nullptr;
};

}  // namespace cnn
