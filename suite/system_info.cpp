#include "suite/system_info.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

namespace cnn {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string cpu_model_in(std::istream& cpuinfo) {
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto first = line.find_first_not_of(" \t", colon + 1), last = line.find_last_not_of(" \t");
    if (first != std::string::npos) return line.substr(first, last + 1 - first);
  }
  return "unknown";
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  return cpu_model_in(in);
}

int logical_cores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n ? int(n) : 1;
}

std::string boot_id_in(std::istream& boot_id_file) {
  std::string id;
  if (!std::getline(boot_id_file, id)) return "";
  // A UUID: hex digits and dashes only, so the report never carries whatever else such a file could hold.
  const bool uuid = id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
  });
  return uuid ? id : "";
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  return boot_id_in(in);
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<std::size_t> peak_bytes_in(std::istream& status) {
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));  // "VmHWM:  123 kB"
    unsigned long long kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB" && kib <= std::numeric_limits<std::size_t>::max() / 1024)
      return std::size_t(kib) * 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

std::size_t peak_host_memory_bytes() {
  std::ifstream in("/proc/self/status");
  if (const auto bytes = peak_bytes_in(in)) return *bytes;
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return std::size_t(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

std::optional<int> procs_running_in(std::istream& stat) {
  std::string key;
  while (stat >> key) {
    int value = 0;
    if (key == "procs_running") return stat >> value ? std::optional<int>(value) : std::nullopt;
    stat.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::nullopt;
}

MachineLoad machine_load() {
  MachineLoad m;
  double avg[1] = {0};
  if (::getloadavg(avg, 1) == 1) m.load_avg_1min = avg[0];
  int least = 1 << 20;
  for (int sample = 0; sample < 5; ++sample) {
    if (sample) ::usleep(10'000);
    std::ifstream in("/proc/stat");
    if (const auto running = procs_running_in(in)) least = std::min(least, *running - 1);
  }
  m.other_runnable = least == (1 << 20) ? 0 : std::max(0, least);
  return m;
}

void reset_peak_host_memory() {
  std::ofstream("/proc/self/clear_refs") << "5";  // 5: reset the peak RSS to the current RSS
}

}  // namespace cnn
