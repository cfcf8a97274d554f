#include "suite/table.hpp"

#include <cstdio>
#include <map>

namespace cnn {
namespace {

std::string fmt(const char* f, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, args...);
  return buf;
}

std::string validation_text(const Validation& v) {
  return fmt("%s (max |p - p_fp64| %.1e, tolerance %.0e, %zu top-1 mismatches, %zu near ties)",
             v.passed ? "passed" : "FAILED", v.max_abs_prob_diff, v.tolerance, v.top1_mismatches, v.near_ties);
}

}  // namespace

std::string format_run_table(const RunRecord& r) {
  std::string s = fmt("\n== %s:%s  %zu images (%zu distinct), batch %zu, %d thread%s, %s\n", r.backend.c_str(),
                      r.variant.c_str(), r.images, r.distinct_images, r.batch, r.threads, r.threads == 1 ? "" : "s",
                      r.device.c_str());
  const double fwd = r.forward_median_ms();
  if (!r.layers_ms.empty()) {
    double layer_sum = 0;
    for (const auto& [name, ms] : r.layers_ms) layer_sum += ms;
    s += fmt("   %-10s %12s %7s\n", "layer", "time ms", "share");
    std::map<std::string, double> by_kind;
    for (const auto& [name, ms] : r.layers_ms) {
      s += fmt("   %-10s %12.3f %6.1f%%\n", name.c_str(), ms, layer_sum > 0 ? 100 * ms / layer_sum : 0.0);
      for (const auto& spec : kLayers)
        if (spec.name == name) by_kind[std::string(kind_name(spec.kind))] += ms;
    }
    s += "   totals:";
    for (const char* k : {"conv", "relu", "pool", "fc", "softmax"})
      s += fmt("  %s %.3f", k, by_kind.count(k) ? by_kind[k] : 0.0);
    s += " ms\n";
  }
  std::string phases;
  for (const auto& [name, ms] : r.phases_ms) phases += fmt("  %s %.3f", name.c_str(), ms);
  s += "   phases ms:" + phases + "\n";
  s += fmt("   forward %.3f ms (median of %zu), %.0f images/s, %.2f GFLOP/s\n", fwd, r.forward_samples_ms.size(),
           r.images_per_s(), r.images_per_s() * kFlopsPerImage / 1e9);
  s += fmt("   accuracy %.2f %%   validation %s\n", 100 * r.accuracy, validation_text(r.validation).c_str());
  return s;
}

std::string format_summary(const std::vector<RunRecord>& runs) {
  std::string s = fmt("\n%-22s %8s %12s %12s %9s %9s  %s\n", "backend:variant", "images", "forward ms",
                      "images/s", "GFLOP/s", "accuracy", "validation");
  for (const RunRecord& r : runs) {
    const std::string name = r.backend + ":" + r.variant;
    s += fmt("%-22s %8zu %12.3f %12.0f %9.2f %8.2f%%  %s\n", name.c_str(), r.images, r.forward_median_ms(),
             r.images_per_s(), r.images_per_s() * kFlopsPerImage / 1e9, 100 * r.accuracy,
             r.validation.passed ? "passed" : "FAILED");
  }
  return s;
}

std::string format_csv(const std::vector<RunRecord>& runs) {
  std::string s =
      "backend,variant,images,distinct_images,batch,threads,forward_ms_median,images_per_s,gflop_per_s,accuracy,"
      "max_abs_prob_diff,top1_mismatches,validation_passed\n";
  for (const RunRecord& r : runs) {
    s += fmt("%s,%s,%zu,%zu,%zu,%d,%.6f,%.3f,%.4f,%.6f,%.3e,%zu,%s\n", r.backend.c_str(), r.variant.c_str(), r.images,
             r.distinct_images, r.batch, r.threads, r.forward_median_ms(), r.images_per_s(),
             r.images_per_s() * kFlopsPerImage / 1e9, r.accuracy, r.validation.max_abs_prob_diff,
             r.validation.top1_mismatches, r.validation.passed ? "true" : "false");
  }
  return s;
}

}  // namespace cnn
