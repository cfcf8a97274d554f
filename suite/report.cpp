#include "suite/report.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "suite/build_info.hpp"
#include "suite/energy.hpp"
#include "suite/system_info.hpp"

namespace cnn {
using json = nlohmann::ordered_json;

namespace {

json ordered_object(const std::vector<std::pair<std::string, double>>& kv) {
  json o = json::object();
  for (const auto& [k, v] : kv) o[k] = v;
  return o;
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double RunRecord::forward_median_ms() const { return median(forward_samples_ms); }

std::string RunRecord::device_fact(const std::string& key) const {
  const auto fact =
      std::find_if(device_info.begin(), device_info.end(), [&](const auto& kv) { return kv.first == key; });
  return fact == device_info.end() ? "" : fact->second;
}

double RunRecord::forward_min_ms() const {
  const auto& s = forward_samples_ms;
  return s.empty() ? 0 : *std::min_element(s.begin(), s.end());
}

double RunRecord::forward_max_ms() const {
  const auto& s = forward_samples_ms;
  return s.empty() ? 0 : *std::max_element(s.begin(), s.end());
}

double RunRecord::images_per_s() const {
  const double ms = forward_median_ms();
  return ms > 0 ? double(images) / (ms / 1000.0) : 0;
}

json run_to_json(const RunRecord& r) {
  json j;
  j["backend"] = r.backend;
  j["variant"] = r.variant;
  j["device"] = r.device;
  j["images"] = r.images;
  j["distinct_images"] = r.distinct_images;
  j["batch"] = r.batch;
  j["threads"] = r.threads;
  j["phases_ms"] = ordered_object(r.phases_ms);
  if (!r.layers_ms.empty()) j["layers_ms"] = ordered_object(r.layers_ms);
  j["forward_ms"] = {{"min", r.forward_min_ms()},
                     {"median", r.forward_median_ms()},
                     {"max", r.forward_max_ms()},
                     {"samples", r.forward_samples_ms}};
  j["images_per_s"] = r.images_per_s();
  j["gflop_per_s"] = r.images_per_s() * kFlopsPerImage / 1e9;  // useful: direct-convolution FLOP
  // parts: the executed FLOP per image on each unit (the first on `unit`); executed_*: their sum.
  const double main_part = r.arithmetic.flop_per_image > 0 ? r.arithmetic.flop_per_image : kFlopsPerImage;
  double executed = main_part;
  json parts = json::array();
  parts.push_back({{"unit", r.arithmetic.unit}, {"executed_flop_per_image", main_part}});
  for (const ArithmeticPart& part : r.arithmetic.other_units) {
    parts.push_back({{"unit", part.unit}, {"executed_flop_per_image", part.flop_per_image}});
    executed += part.flop_per_image;
  }
  j["arithmetic"] = {{"unit", r.arithmetic.unit},
                     {"executed_flop_per_image", executed},
                     {"executed_gflop_per_s", r.images_per_s() * executed / 1e9},
                     {"parts", parts}};
  j["accuracy"] = r.accuracy;
  const Validation& v = r.validation;
  j["validation"] = {{"reference", "fp64"},
                     {"compared", v.compared},
                     {"top1_mismatches", v.top1_mismatches},
                     {"near_ties", v.near_ties},
                     {"max_abs_prob_diff", v.max_abs_prob_diff},
                     {"worst_image", v.worst_image},
                     {"tolerance", v.tolerance},
                     {"passed", v.passed}};
  json dev = json::object();
  for (const auto& [k, val] : r.device_info) dev[k] = val;
  j["device_info"] = dev;
  j["memory_bytes"] = {{"host_peak", r.peak_host_memory_bytes}, {"device_peak", r.peak_device_memory_bytes}};
  if (!r.energy_images_per_j.empty()) {
    const auto& w = r.energy_images_per_j;
    const double med = median(w);
    j["energy"] = {{"source", r.energy_source},
                   {"images_per_j", med},
                   {"images_per_j_min", *std::min_element(w.begin(), w.end())},
                   {"images_per_j_max", *std::max_element(w.begin(), w.end())},
                   {"joules_per_pass", double(r.images) / med},
                   {"windows", w.size()},
                   {"passes_per_window", r.energy_passes},
                   {"window_ms", r.energy_window_ms}};
  } else {
    j["energy"] = {{"source", r.energy_source}, {"unavailable", r.energy_why_not}};
  }
  j["machine_load"] = {{"load_avg_1min_start", r.load_start.load_avg_1min},
                       {"load_avg_1min_end", r.load_end.load_avg_1min},
                       {"other_runnable_start", r.load_start.other_runnable},
                       {"other_runnable_end", r.load_end.other_runnable}};
  if (!r.mpi.is_null()) j["mpi"] = r.mpi;
  return j;
}

json make_report(const ReportMeta& meta, const std::vector<RunRecord>& runs) {
  json m;
  m["suite_version"] = build_info::version;
  m["git_commit"] = build_info::git_commit();
  m["git_dirty"] = build_info::git_dirty();
  json backend_flags = json::object();
  for (const auto& [folder, flags] : build_info::backend_flags()) backend_flags[folder] = flags;
  m["compiler"] = {{"id", build_info::compiler_id},
                   {"version", build_info::compiler_version},
                   {"flags", build_info::compiler_flags},
                   {"backend_flags", backend_flags}};
  m["build_type"] = build_info::build_type;
  m["host"] = host_name();
  m["cpu_model"] = cpu_model();
  m["logical_cores"] = logical_cores();
  m["boot_id"] = boot_id();
  if (!meta.label.empty()) m["label"] = meta.label;
  int threads_ran = 0;  // what ran, not what was asked for (OMP_THREAD_LIMIT, one-thread variants)
  for (const RunRecord& r : runs) threads_ran = std::max(threads_ran, r.threads);
  m["threads"] = threads_ran;
  m["threads_requested"] = meta.threads_requested;
  m["command_line"] = meta.command_line;
  // The OpenMP settings that ran: suite/main.cpp's defaults where the user set none ("" where unset).
  static constexpr std::pair<const char*, const char*> kOpenMpSettings[] = {
      {"openmp_wait_policy", "OMP_WAIT_POLICY"}, {"openmp_spin_count", "GOMP_SPINCOUNT"},
      {"openmp_proc_bind", "OMP_PROC_BIND"}, {"openmp_places", "OMP_PLACES"}};
  for (const auto& [key, variable] : kOpenMpSettings) {
    const char* value = std::getenv(variable);
    m[key] = value ? value : "";
  }
  m["date_utc"] = utc_now_iso8601();
  m["data"] = meta.data_sources;
  m["weights"] = meta.weights;
  m["flops_per_image"] = kFlopsPerImage;
  m["reference_ms"] = meta.reference_ms;
  const EnergyCounter cpu_energy = EnergyCounter::cpu();  // GPU runs say their source in their own record
  m["energy"] = {{"cpu", cpu_energy.available() ? "rapl" : cpu_energy.why_not()}};
  // The GPU facts of the runs that used one (device_info), the first run to name a fact giving it.
  json gpu = json::object();
  for (const RunRecord& r : runs)
    for (const auto& [k, val] : r.device_info)
      if ((k.rfind("gpu_", 0) == 0 || k == "driver_version" || k == "cuda_runtime_version") && !gpu.contains(k))
        gpu[k] = val;
  if (!gpu.empty()) m["gpu"] = gpu;
  if (!meta.mpi.is_null()) m["mpi"] = meta.mpi;
  json report;
  report["schema_version"] = kSchemaVersion;
  report["meta"] = m;
  report["runs"] = json::array();
  for (const RunRecord& r : runs) report["runs"].push_back(run_to_json(r));
  return report;
}

}  // namespace cnn
