#include "suite/gbench.hpp"

#include <unistd.h>

#include <bit>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <string_view>

#include "suite/build_info.hpp"
#include "suite/system_info.hpp"

namespace cnn {
using json = nlohmann::ordered_json;
using nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

std::string read_line(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

// "32K", "1024K", "8M" -> bytes
std::int64_t parse_size(const std::string& s) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (end && (*end == 'K' || *end == 'k')) return v * 1024;
  if (end && (*end == 'M' || *end == 'm')) return v * 1024 * 1024;
  return v;
}

// "00000003" or "00000000,00000003": a hex mask of the CPUs sharing the cache
std::int64_t count_mask_bits(const std::string& mask) {
  std::int64_t n = 0;
  for (char c : mask) {
    if (c == ',') continue;
    const int digit = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                      : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
                      : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                                  : 0;
    n += std::popcount(static_cast<unsigned>(digit));
  }
  return n;
}

std::vector<GbenchCache> read_caches() {
  std::vector<GbenchCache> out;
  const fs::path dir = "/sys/devices/system/cpu/cpu0/cache";
  for (int i = 0;; ++i) {
    const fs::path idx = dir / ("index" + std::to_string(i));
    std::error_code ec;
    if (!fs::is_directory(idx, ec)) break;
    GbenchCache c;
    c.type = read_line(idx / "type");
    c.level = std::atoll(read_line(idx / "level").c_str());
    c.size = parse_size(read_line(idx / "size"));
    c.num_sharing = count_mask_bits(read_line(idx / "shared_cpu_map"));
    out.push_back(c);
  }
  return out;
}

std::int64_t read_mhz() {
  // The nominal maximum where cpufreq tells it, else the first "cpu MHz" of /proc/cpuinfo.
  const std::string khz = read_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  if (!khz.empty()) return std::atoll(khz.c_str()) / 1000;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return std::llround(std::atof(line.c_str() + colon + 1));
    }
  }
  return 0;
}

std::string local_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char date[32], out[96];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  const long off = tm.tm_gmtoff / 60;  // minutes east of UTC, written +00:00 as Google Benchmark does
  std::snprintf(out, sizeof out, "%s%c%02ld:%02ld", date, off < 0 ? '-' : '+', std::labs(off) / 60, std::labs(off) % 60);
  return out;
}

}  // namespace

GbenchMachine this_machine() {
  GbenchMachine m;
  m.date = local_iso8601();
  m.host_name = host_name();
  std::error_code ec;
  m.executable = fs::read_symlink("/proc/self/exe", ec).string();
  m.num_cpus = logical_cores();
  m.mhz_per_cpu = read_mhz();
  const std::string governor = read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  m.cpu_scaling_enabled = !governor.empty() && governor != "performance";
  m.caches = read_caches();
  double load[3] = {0, 0, 0};
  const int n = ::getloadavg(load, 3);
  m.load_avg.assign(load, load + (n > 0 ? n : 0));
  const std::string_view type = build_info::build_type;
  m.library_build_type = (type == "Debug") ? "debug" : "release";
  return m;
}

ordered_json to_gbench(const std::vector<RunRecord>& runs, const GbenchMachine& machine) {
  ordered_json caches = ordered_json::array();
  for (const GbenchCache& c : machine.caches)
    caches.push_back({{"type", c.type}, {"level", c.level}, {"size", c.size}, {"num_sharing", c.num_sharing}});
  ordered_json ctx = {{"date", machine.date},
                      {"host_name", machine.host_name},
                      {"executable", machine.executable},
                      {"num_cpus", machine.num_cpus},
                      {"mhz_per_cpu", machine.mhz_per_cpu},
                      {"cpu_scaling_enabled", machine.cpu_scaling_enabled},
                      {"caches", caches},
                      {"load_avg", machine.load_avg},
                      {"library_version", std::string("cnn-suite v") + build_info::version},
                      {"library_build_type", machine.library_build_type},
                      {"json_schema_version", 1}};
  // Custom context, as benchmark::AddCustomContext would add it: strings only.
  ctx["suite_version"] = build_info::version;
  ctx["git_commit"] = build_info::git_commit();
  ctx["cpu_model"] = cpu_model();
  for (const RunRecord& r : runs) {
    if (const std::string gpu = r.device_fact("gpu_name"); !gpu.empty()) {
      ctx["gpu_name"] = gpu;
      break;
    }
  }

  ordered_json benchmarks = ordered_json::array();
  std::map<std::string, std::int64_t> family_of;     // backend:variant -> family_index
  std::map<std::string, std::int64_t> instances_of;  // backend:variant -> instances so far
  for (const RunRecord& r : runs) {
    const std::string family = r.backend + ":" + r.variant;
    if (!family_of.count(family)) family_of[family] = std::int64_t(family_of.size());
    const std::string name = family + "/images:" + std::to_string(r.images);
    const auto& samples = r.forward_samples_ms;
    const double median = r.forward_median_ms();

    ordered_json b;
    b["name"] = name;
    b["family_index"] = family_of[family];
    b["per_family_instance_index"] = instances_of[family]++;
    b["run_name"] = name;
    b["run_type"] = "iteration";
    b["repetitions"] = 1;
    b["repetition_index"] = 0;
    b["threads"] = r.threads;
    b["iterations"] = std::int64_t(samples.size());
    b["real_time"] = median;
    b["cpu_time"] = median;
    b["time_unit"] = "ms";
    // Counters: Google Benchmark writes every counter as a double.
    b["images_per_s"] = r.images_per_s();
    b["gflop_per_s"] = r.images_per_s() * kFlopsPerImage / 1e9;
    b["accuracy"] = r.accuracy;
    b["validation_passed"] = r.validation.passed ? 1.0 : 0.0;
    b["max_abs_prob_diff"] = std::isfinite(r.validation.max_abs_prob_diff) ? r.validation.max_abs_prob_diff : -1.0;
    b["forward_min_ms"] = samples.empty() ? median : r.forward_min_ms();
    b["forward_max_ms"] = samples.empty() ? median : r.forward_max_ms();
    b["images"] = double(r.images);
    b["batch"] = double(r.batch);
    for (const auto& [phase, ms] : r.phases_ms) {
      std::string key = phase;  // (not phase + "_ms": GCC 12 -O2 warns a false -Wrestrict on that)
      key += "_ms";
      b[key] = ms;
    }
    b["label"] = r.device;
    benchmarks.push_back(b);
  }
  ordered_json out;
  out["context"] = ctx;
  out["benchmarks"] = benchmarks;
  return out;
}

}  // namespace cnn
