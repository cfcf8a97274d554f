#include "suite/system_info.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

namespace cnn {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

int logical_cores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n ? int(n) : 1;
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!std::getline(in, id)) return "";
  // A UUID: hex digits and dashes only, so the report never carries whatever else such a file could hold.
  const bool uuid = id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
  });
  return uuid ? id : "";
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::size_t peak_host_memory_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::size_t(std::stoull(line.substr(6))) * 1024;  // "VmHWM:  123 kB"
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return std::size_t(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

MachineLoad machine_load() {
  MachineLoad m;
  double avg[1] = {0};
  if (::getloadavg(avg, 1) == 1) m.load_avg_1min = avg[0];
  int least = 1 << 20;
  for (int sample = 0; sample < 5; ++sample) {
    if (sample) ::usleep(10'000);
    std::ifstream in("/proc/stat");
    std::string key;
    int value = 0;
    while (in >> key) {
      if (key == "procs_running" && in >> value) {
        least = std::min(least, value - 1);
        break;
      }
      in.ignore(1 << 20, '\n');
    }
  }
  m.other_runnable = least == (1 << 20) ? 0 : std::max(0, least);
  return m;
}

void reset_peak_host_memory() {
  std::ofstream("/proc/self/clear_refs") << "5";  // 5: reset the peak RSS to the current RSS
}

}  // namespace cnn
