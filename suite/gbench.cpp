#include "suite/gbench.hpp"

#include <unistd.h>

#include <bit>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <string_view>

#include "common/build_info.hpp"
#include "common/system_info.hpp"

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
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);  // ...+0000
  std::string s = buf;
  if (s.size() >= 5) s.insert(s.size() - 2, ":");              // ...+00:00, as Google Benchmark writes it
  return s;
}

double number_or(const json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string string_or(const json& j, const char* key, const std::string& fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
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

ordered_json to_gbench(const ordered_json& report, const GbenchMachine& machine) {
  ordered_json ctx;
  ctx["date"] = machine.date;
  ctx["host_name"] = machine.host_name;
  ctx["executable"] = machine.executable;
  ctx["num_cpus"] = machine.num_cpus;
  ctx["mhz_per_cpu"] = machine.mhz_per_cpu;
  ctx["cpu_scaling_enabled"] = machine.cpu_scaling_enabled;
  ctx["caches"] = ordered_json::array();
  for (const GbenchCache& c : machine.caches)
    ctx["caches"].push_back({{"type", c.type}, {"level", c.level}, {"size", c.size}, {"num_sharing", c.num_sharing}});
  ctx["load_avg"] = machine.load_avg;
  ctx["library_version"] = std::string("cnn-suite v") + build_info::version;
  ctx["library_build_type"] = machine.library_build_type;
  ctx["json_schema_version"] = 1;
  // Custom context, as benchmark::AddCustomContext would add it: strings only.
  const json& meta = report.value("meta", json::object());
  ctx["suite_version"] = string_or(meta, "suite_version", build_info::version);
  ctx["git_commit"] = string_or(meta, "git_commit", "unknown");
  ctx["cpu_model"] = string_or(meta, "cpu_model", "unknown");
  if (meta.contains("gpu") && meta["gpu"].is_object()) ctx["gpu_name"] = string_or(meta["gpu"], "gpu_name", "unknown");

  ordered_json benchmarks = ordered_json::array();
  std::map<std::string, std::int64_t> family_of;         // backend:variant -> family_index
  std::map<std::string, std::int64_t> instances_of;      // backend:variant -> instances so far
  for (const json& run : report.value("runs", json::array())) {
    const std::string family = run.value("backend", "?") + ":" + run.value("variant", "?");
    if (!family_of.count(family)) family_of[family] = std::int64_t(family_of.size());
    const std::string name = family + "/images:" + std::to_string(run.value("images", std::int64_t{0}));
    const json& fwd = run.value("forward_ms", json::object());
    const double median = number_or(fwd, "median", 0);
    const auto samples = fwd.value("samples", json::array());

    ordered_json b;
    b["name"] = name;
    b["family_index"] = family_of[family];
    b["per_family_instance_index"] = instances_of[family]++;
    b["run_name"] = name;
    b["run_type"] = "iteration";
    b["repetitions"] = 1;
    b["repetition_index"] = 0;
    b["threads"] = run.value("threads", 1);
    b["iterations"] = std::int64_t(samples.size());
    b["real_time"] = median;
    b["cpu_time"] = median;
    b["time_unit"] = "ms";
    // Counters: Google Benchmark writes every counter as a double.
    b["images_per_s"] = number_or(run, "images_per_s", 0);
    b["gflop_per_s"] = number_or(run, "gflop_per_s", 0);
    b["accuracy"] = number_or(run, "accuracy", 0);
    const json& val = run.value("validation", json::object());
    b["validation_passed"] = val.value("passed", false) ? 1.0 : 0.0;
    b["max_abs_prob_diff"] = number_or(val, "max_abs_prob_diff", 0);
    b["forward_min_ms"] = number_or(fwd, "min", median);
    b["forward_max_ms"] = number_or(fwd, "max", median);
    b["images"] = number_or(run, "images", 0);
    b["batch"] = number_or(run, "batch", 0);
    const json phases = run.value("phases_ms", json::object());
    for (const auto& [phase, ms] : phases.items())
      if (ms.is_number()) b[phase + "_ms"] = ms.get<double>();
    b["label"] = run.value("device", "");
    benchmarks.push_back(b);
  }
  ordered_json out;
  out["context"] = ctx;
  out["benchmarks"] = benchmarks;
  return out;
}

}  // namespace cnn
