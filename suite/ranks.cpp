#include "suite/ranks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace cnn {
using json = nlohmann::ordered_json;

namespace {

const char* mode_name(MpiMode mode) { return mode == MpiMode::split ? "split" : "replicate"; }

// A rank's difference: JSON has no Inf, so a NaN or Inf output arrives as null.
double difference(const json& x) { return x.is_number() ? x.get<double>() : INFINITY; }

std::string failure_line(const std::string& who, const RunRecord& r, const json& v) {
  std::ostringstream s;
  s << who << "validation failed for " << r.backend << ":" << r.variant << " on " << v["compared"].get<std::size_t>()
    << " images: max |p - p_fp64| " << difference(v["max_abs_prob_diff"]) << " (tolerance " << r.validation.tolerance
    << "), " << v["top1_mismatches"].get<std::size_t>() << " top-1 mismatches";
  return s.str();
}

json validation_json(const Validation& v) {
  return {{"passed", v.passed},
          {"compared", v.compared},
          {"top1_mismatches", v.top1_mismatches},
          {"near_ties", v.near_ties},
          {"max_abs_prob_diff", v.max_abs_prob_diff},
          {"worst_image", v.worst_image}};
}

}  // namespace

Share share_of(std::size_t images, int rank, int ranks, MpiMode mode) {
  if (mode == MpiMode::replicate || ranks <= 1) return {0, images};
  const std::size_t r = std::size_t(rank), n = std::size_t(ranks);
  const std::size_t base = images / n, extra = images % n;
  return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

Dataset slice_of(const Dataset& data, std::size_t start, std::size_t count) {
  Dataset out;
  out.sources = data.sources;
  out.pixels.resize(count * kImageBytes);
  out.labels.resize(count);
  for (std::size_t j = 0; j < count; ++j) {
    const std::size_t i = (start + j) % data.size();
    std::memcpy(out.pixels.data() + j * kImageBytes, data.image(i), kImageBytes);
    out.labels[j] = data.labels[i];
  }
  return out;
}

std::string rank_summary(const RunRecord& own, const Share& share, const std::vector<double>& own_samples_ms) {
  json j = {{"start", share.start},
            {"images", share.count},
            {"forward_median_ms", median(own_samples_ms)},
            {"accuracy", own.accuracy},
            {"threads", own.threads},
            {"host_peak", own.peak_host_memory_bytes},
            {"validation", validation_json(own.validation)}};
  return j.dump();
}

void combine_ranks(RunRecord& r, const std::vector<std::string>& summaries, MpiMode mode, std::size_t loaded) {
  std::vector<json> ranks;
  for (const std::string& s : summaries) ranks.push_back(json::parse(s));
  std::size_t images = 0;
  double right = 0, slowest_rank = 0, mean = 0;
  json per_rank = json::array(), forward = json::array(), counts = json::array();
  Validation all = r.validation;
  all.compared = all.top1_mismatches = all.near_ties = 0;
  all.max_abs_prob_diff = 0;
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const json& s = ranks[k];
    const json& v = s["validation"];
    const std::size_t n = s["images"];
    images += n;
    right += s["accuracy"].get<double>() * double(n);
    const double ms = s["forward_median_ms"];
    slowest_rank = std::max(slowest_rank, ms);
    mean += ms / double(ranks.size());
    forward.push_back(ms);
    counts.push_back(n);
    all.passed = all.passed && v["passed"].get<bool>();
    all.compared += v["compared"].get<std::size_t>();
    all.top1_mismatches += v["top1_mismatches"].get<std::size_t>();
    all.near_ties += v["near_ties"].get<std::size_t>();
    const double diff = difference(v["max_abs_prob_diff"]);
    if (!(diff <= all.max_abs_prob_diff)) {
      all.max_abs_prob_diff = diff;
      all.worst_image = s["start"].get<std::size_t>() + v["worst_image"].get<std::size_t>();
    }
    r.peak_host_memory_bytes = std::max(r.peak_host_memory_bytes, s["host_peak"].get<std::size_t>());
    json entry = {{"rank", k}, {"images", n}};
    entry.update(v);
    entry.erase("worst_image");
    per_rank.push_back(entry);
  }
  r.validation = all;
  r.accuracy = images ? right / double(images) : 0;
  if (mode == MpiMode::split) {
    r.images = images;
    r.distinct_images = std::min(images, loaded);
  }
  const double slowest_s = r.forward_median_ms() / 1000.0;
  r.mpi = {{"ranks", ranks.size()},
           {"mode", mode_name(mode)},
           {"images_per_rank", counts},
           {"forward_median_ms_per_rank", forward},
           {"load_imbalance", mean > 0 ? slowest_rank / mean : 0.0},
           {"aggregate_images_per_s", slowest_s > 0 ? double(images) / slowest_s : 0.0},
           {"validation_per_rank", per_rank}};
}

std::vector<std::string> validation_failures(const RunRecord& r) {
  std::vector<std::string> lines;
  if (r.validation.passed) return lines;
  if (r.mpi.is_null()) {
    lines.push_back(failure_line("", r, validation_json(r.validation)));
    return lines;
  }
  for (const json& v : r.mpi["validation_per_rank"])
    if (!v["passed"].get<bool>()) lines.push_back(failure_line("rank " + v["rank"].dump() + ": ", r, v));
  return lines;
}

std::string binding_summary(const RankBinding& b, int threads) {
  return json{{"rank", b.rank},          {"host", b.host}, {"local_rank", b.local_rank},
              {"cpus", cpu_list_text(b.cpus)}, {"threads", threads}, {"gpu", b.gpu}}
      .dump();
}

json mpi_meta(MpiMode mode, const std::vector<std::string>& bindings) {
  json list = json::array();
  for (const std::string& b : bindings) list.push_back(json::parse(b));
  return {{"ranks", bindings.size()}, {"mode", mode_name(mode)}, {"binding", list}};
}

}  // namespace cnn
