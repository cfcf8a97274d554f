// Facts about the machine a report was taken on.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>

namespace cnn {

std::string host_name();
std::string cpu_model();
int logical_cores();
// The kernel's id of the running boot (Linux: /proc/sys/kernel/random/boot_id), "" where there is none.
// Two reports with one boot id ran in one session of one machine, so their times compare like for like;
// across boots (a fresh VM, a rebooted host) the same code may run 1.5x apart.
std::string boot_id();
std::string utc_now_iso8601();
// The resident-set high-water mark of this process since the last reset_peak_host_memory() (Linux
// resets it through /proc/self/clear_refs; where that is refused, the process's whole-life peak).
std::size_t peak_host_memory_bytes();
void reset_peak_host_memory();

// How busy the machine is: the 1-minute load average, and the processes runnable right now besides this
// one (the least of a few samples over 50 ms: /proc/stat's procs_running counts this process too).
// The load average lags by a minute and includes this process' own last run; the runnable count does not.
struct MachineLoad {
  double load_avg_1min = 0;
  int other_runnable = 0;
};
MachineLoad machine_load();

// What the functions above read from their files (/proc/cpuinfo, boot_id, /proc/self/status, /proc/stat),
// apart so that tests can give them any text. Each says "none" (unknown, "", nullopt) for text it cannot read.
std::string cpu_model_in(std::istream& cpuinfo);
std::string boot_id_in(std::istream& boot_id_file);
std::optional<std::size_t> peak_bytes_in(std::istream& status);  // VmHWM
std::optional<int> procs_running_in(std::istream& stat);

}  // namespace cnn
