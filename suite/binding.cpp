#include "suite/binding.hpp"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "suite/system_info.hpp"

namespace cnn {
namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// Sets the calling thread's CPUs: the threads that the backends start later (OpenMP, TBB) inherit them.
void run_on(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int c : cpus) CPU_SET(c, &set);
  (void)::sched_setaffinity(0, sizeof set, &set);  // where it fails, the rank runs on the CPUs it had
}

// The NVIDIA GPUs of this machine (or container) without initialising CUDA: /dev/nvidia0, /dev/nvidia1...
int gpu_devices() {
  std::error_code ec;
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/dev", ec)) {
    const std::string name = e.path().filename().string();  // nvidia<digits>, not nvidiactl or nvidia-uvm
    if (name.size() > 6 && name.compare(0, 6, "nvidia") == 0 &&
        std::all_of(name.begin() + 6, name.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
      ++n;
  }
  return n;
}

}  // namespace

std::vector<int> cpu_share(const std::vector<int>& allowed, int local_rank, int local_size) {
  const std::size_t n = allowed.size(), ranks = std::size_t(std::max(1, local_size)), r = std::size_t(local_rank);
  if (n == 0) return {};
  if (n < ranks) return {allowed[r % n]};
  const std::size_t base = n / ranks, extra = n % ranks;
  const std::size_t start = r * base + std::min(r, extra), count = base + (r < extra ? 1 : 0);
  return std::vector<int>(allowed.begin() + std::ptrdiff_t(start), allowed.begin() + std::ptrdiff_t(start + count));
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string s;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!s.empty()) s += ',';
    s += std::to_string(cpus[i]);
    if (j > i) {
      s += '-';
      s += std::to_string(cpus[j]);
    }
    i = j + 1;
  }
  return s;
}

std::string gpu_for(const char* visible, int devices, int local_rank) {
  std::vector<std::string> ids;
  if (visible) {
    std::string item;
    for (const char* p = visible;; ++p) {
      if (*p == ',' || *p == '\0') {
        if (!item.empty()) ids.push_back(item);
        item.clear();
        if (*p == '\0') break;
      } else if (*p != ' ') {
        item += *p;
      }
    }
  } else {
    for (int d = 0; d < devices; ++d) ids.push_back(std::to_string(d));
  }
  return ids.empty() ? std::string() : ids[std::size_t(local_rank) % ids.size()];
}

std::string narrow_visible_gpus(int local_rank) {
  const std::string gpu = gpu_for(std::getenv("CUDA_VISIBLE_DEVICES"), gpu_devices(), local_rank);
  if (!gpu.empty()) ::setenv("CUDA_VISIBLE_DEVICES", gpu.c_str(), 1);
  return gpu;
}

int launcher_local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* v = std::getenv(name);
    char* end = nullptr;
    const long rank = v ? std::strtol(v, &end, 10) : -1;
    if (v && *v && *end == '\0' && rank >= 0 && rank < (1 << 20)) return int(rank);
  }
  return -1;
}

RankBinding bind_rank(Team& team) {
  RankBinding b{team.rank(), team.local_rank(), host_name(), allowed_cpus(), "none"};
  if (!team.is_mpi()) return b;
  const std::vector<std::string> sets = team.local_all_gather(cpu_list_text(b.cpus));
  const bool launcher_bound = std::adjacent_find(sets.begin(), sets.end(), std::not_equal_to<>()) != sets.end();
  if (!launcher_bound && team.local_size() > 1) {
    b.cpus = cpu_share(b.cpus, team.local_rank(), team.local_size());
    run_on(b.cpus);
  }
  const std::string gpu = narrow_visible_gpus(team.local_rank());
  if (!gpu.empty()) b.gpu = gpu;
  return b;
}

}  // namespace cnn
