#include "suite/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>

#include "common/atomic_file.hpp"
#include "common/build_info.hpp"
#include "common/dataset.hpp"
#include "common/energy.hpp"
#include "common/errors.hpp"
#include "common/reference.hpp"
#include "common/report.hpp"
#include "common/system_info.hpp"
#include "common/text.hpp"
#include "common/timer.hpp"
#include "suite/cli.hpp"
#include "suite/gbench.hpp"
#include "suite/output_plan.hpp"
#include "suite/signals.hpp"
#include "suite/startup.hpp"
#include "suite/table.hpp"

namespace cnn {
namespace fs = std::filesystem;

namespace {

// ---- standard output: what the user asked to see. A closed pipe (`| head`) or a full disk is noticed
// and reported at the end; it never stops the run or costs the report. A standard output closed from the
// start (`>&-`, /dev/null since suite/startup.cpp) is the user's choice not to see it, and is no error.
class Stdout {
 public:
  void write(const std::string& s) {
    if (error_ != 0 || s.empty()) return;
    if (stdout_closed_at_start()) {
      unseen_ = true;
      return;
    }
    errno = 0;
    if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size() || std::fflush(stdout) != 0) error_ = errno ? errno : EIO;
  }
  int error() const { return error_; }
  bool unseen() const { return unseen_; }  // output was meant for a standard output closed from the start

 private:
  int error_ = 0;
  bool unseen_ = false;
};

// ---- backend selection
struct Selected {
  const Backend* backend;
  VariantInfo variant;
};

struct Registry {
  std::vector<std::pair<const RegistryEntry*, std::unique_ptr<Backend>>> backends;  // built ones made
  explicit Registry(const std::vector<RegistryEntry>& entries) {
    for (const auto& e : entries) backends.emplace_back(&e, e.make ? e.make() : nullptr);
  }
};

std::string list_text(const Registry& reg) {
  std::string s = "backend:variant        built  runnable here\n";
  for (const auto& [entry, b] : reg.backends) {
    if (!b) {
      s += entry->name + std::string(std::max<int>(1, 23 - int(entry->name.size())), ' ') + "no     no: " +
           entry->not_built_reason + "\n";
      continue;
    }
    const Availability a = b->availability();
    for (const auto& v : b->variants()) {
      const std::string name = entry->name + ":" + v.name;
      s += name + std::string(std::max<int>(1, 23 - int(name.size())), ' ') + "yes    " +
           (a.runnable ? "yes (" + a.device + ")" : "no: " + a.reason) + "\n       " + v.description + "\n";
    }
  }
  return s;
}

// Every variant of every backend that can run here; the others are skipped with a note.
std::vector<Selected> all_runnable(const Registry& reg, bool quiet) {
  std::vector<Selected> out;
  for (const auto& [entry, b] : reg.backends) {
    if (!b) continue;
    const Availability a = b->availability();
    if (!a.runnable) {
      if (!quiet) std::cerr << "suite: note: skipping " << entry->name << ": " << a.reason << "\n";
      continue;
    }
    for (const auto& v : b->variants()) out.push_back({b.get(), v});
  }
  if (out.empty()) throw UnavailableError("--backend all: no backend can run on this machine");
  return out;
}

// One item of --backend: "name" (every variant) or "name:variant".
std::vector<Selected> select_one(const Registry& reg, const std::string& item) {
  const auto colon = item.find(':');
  const std::string name = item.substr(0, colon);
  const auto it = std::find_if(reg.backends.begin(), reg.backends.end(),
                               [&](const auto& p) { return p.first->name == name; });
  if (it == reg.backends.end()) {
    std::string known;
    for (const auto& [e, b] : reg.backends) known += (known.empty() ? "" : ", ") + e->name;
    throw UsageError("--backend '" + display(item) + "': unknown backend (known: " + known + ")");
  }
  const Backend* b = it->second.get();
  if (!b) throw UnavailableError("--backend '" + item + "': " + it->first->not_built_reason);
  const auto variants = b->variants();
  std::vector<VariantInfo> chosen;
  if (colon == std::string::npos) {
    chosen = variants;
  } else {
    std::string vname = item.substr(colon + 1);
    for (const RenamedVariant& r : renamed_variants())
      if (r.backend == name && r.old_name == vname) {
        std::cerr << "suite: note: " << name << ":" << vname << " is now called " << name << ":" << r.new_name
                  << "; running that\n";
        vname = r.new_name;
      }
    const auto v = std::find_if(variants.begin(), variants.end(), [&](const auto& x) { return x.name == vname; });
    if (v == variants.end()) {
      std::string known;
      for (const auto& x : variants) known += (known.empty() ? "" : ", ") + x.name;
      throw UsageError("--backend '" + display(item) + "': " + name + " has no variant '" + display(vname) +
                       "' (variants: " + known + ")");
    }
    chosen.push_back(*v);
  }
  const Availability a = b->availability();
  if (!a.runnable) throw UnavailableError("--backend '" + item + "': cannot run here: " + a.reason);
  std::vector<Selected> out;
  for (auto& v : chosen) out.push_back({b, v});
  return out;
}

// The runs in the order asked for, each backend:variant once ("all,serial" is "all").
std::vector<Selected> select_backends(const Registry& reg, const std::vector<std::string>& wanted, bool quiet) {
  std::vector<Selected> out;
  std::set<std::pair<const Backend*, std::string>> seen;
  for (const std::string& item : wanted) {
    for (Selected& s : item == "all" ? all_runnable(reg, quiet) : select_one(reg, item))
      if (seen.insert({s.backend, s.variant.name}).second) out.push_back(std::move(s));
  }
  return out;
}

// ---- progress on a terminal
std::function<void(std::size_t, std::size_t)> progress_printer(const std::string& label, bool enabled) {
  if (!enabled || !::isatty(STDERR_FILENO)) return {};
  return [label](std::size_t done, std::size_t total) {
    std::fprintf(stderr, "\r  %s: %zu / %zu images (%.0f %%)   ", label.c_str(), done, total, 100.0 * done / total);
    if (done >= total) std::fprintf(stderr, "\r%*s\r", int(label.size()) + 48, "");
    std::fflush(stderr);
  };
}

// ---- one run
struct RunInput {
  const Network* net;
  const Dataset* data;
  const std::uint8_t* pixels;  // images x kImageBytes
  std::size_t images, distinct;
  const std::vector<double>* reference;  // distinct x 10
  double load_ms;
};

// The record's identity and the machine's load before the run (a warning when it is busy).
RunRecord start_record(const Selected& sel, const RunInput& in, const Options& opt) {
  RunRecord r;
  r.backend = sel.backend->name();
  r.variant = sel.variant.name;
  r.arithmetic = sel.variant.arithmetic;
  r.load_start = machine_load();
  if (!opt.quiet && r.load_start.other_runnable >= std::max(1, logical_cores() / 2)) {
    std::cerr << "suite: warning: the machine is busy (" << r.load_start.other_runnable
              << " other processes runnable, load average " << r.load_start.load_avg_1min << " on " << logical_cores()
              << " cores) before " << r.backend << ":" << r.variant << ": its timings may be unreliable\n";
  }
  r.images = in.images;
  r.distinct_images = in.distinct;
  return r;
}

// Auto mode: one warm-up unless a pass takes over a second (then that pass is the first sample).
void warm_up(Session& session, const Options& opt, RunRecord& r, LayerTimes& layers) {
  const int warmups = opt.warmup >= 0 ? opt.warmup : 1;
  for (int w = 0; w < warmups; ++w) {
    LayerTimes scratch;
    const double ms = session.forward(scratch);
    if (opt.warmup < 0 && ms > 1000.0) {  // too slow to waste: keep it as the sample
      r.forward_samples_ms.push_back(ms);
      layers = scratch;
    }
  }
}

// --repeat samples, or in auto mode up to 5 within about a second of forward time; layer times summed.
void timed_passes(Session& session, const Options& opt, RunRecord& r, LayerTimes& layers) {
  std::vector<double>& samples = r.forward_samples_ms;
  double spent = 0;
  for (const double ms : samples) spent += ms;
  const int max_samples = opt.repeat > 0 ? opt.repeat : 5;
  while (int(samples.size()) < max_samples && (opt.repeat > 0 || samples.empty() || spent < 1000.0)) {
    LayerTimes scratch;
    const double ms = session.forward(scratch);
    samples.push_back(ms);
    spent += ms;
    if (layers.empty()) {
      layers = scratch;
    } else {
      for (std::size_t i = 0; i < layers.size() && i < scratch.size(); ++i) layers[i].second += scratch[i].second;
    }
  }
}

// Energy per image, apart from the timed passes: windows of passes of at least a second each, three of them
// (one where a pass takes over 2 s), so that each window spans many updates of the counter (NVML's moves every
// few to 100 ms: 20 passes of 3.8 ms gave 47 000 images/J in one run and 65 000 in another). Each window's
// images per joule is kept: the report gives their median and spread. Nothing runs when there is no counter.
void measure_energy(Session& session, RunRecord& r) {
  const EnergyCounter energy = session.on_device() ? EnergyCounter::gpu() : EnergyCounter::cpu();
  r.energy_source = energy.source();
  r.energy_why_not = energy.why_not();
  if (!energy.available()) return;
  constexpr double kWindowMs = 1000;
  const int windows = r.forward_median_ms() > 2 * kWindowMs ? 1 : 3;
  for (int w = 0; w < windows; ++w) {
    const std::optional<double> start = energy.joules();
    double spent = 0;
    std::size_t passes = 0;
    for (; spent < kWindowMs; ++passes) {
      LayerTimes scratch;
      spent += session.forward(scratch);
    }
    const std::optional<double> end = energy.joules();
    if (!start || !end || !(*end > *start)) {
      r.energy_why_not = !start || !end ? "the counter could not be read" : "the counter did not move in a 1 s window";
      r.energy_images_per_j.clear();
      return;
    }
    r.energy_images_per_j.push_back(double(r.images) * double(passes) / (*end - *start));
    r.energy_passes = passes;
    r.energy_window_ms = spent;
  }
}

// The timed passes, then the mean time of each layer, then the energy.
void measure(Session& session, const Options& opt, RunRecord& r) {
  LayerTimes layers;
  warm_up(session, opt, r, layers);
  timed_passes(session, opt, r, layers);
  measure_energy(session, r);
  const double n_layer_samples = double(r.forward_samples_ms.size());
  for (auto& [name, ms] : layers) ms /= n_layer_samples;
  r.layers_ms = layers;
  r.threads = session.threads();  // after the passes: a session may count the threads that really ran
}

struct CopyTimes {
  double setup_ms = 0, h2d_ms = 0, d2h_ms = 0;
};

void record_phases(RunRecord& r, const RunInput& in, const CopyTimes& t, bool on_device) {
  const double fwd = r.forward_median_ms();
  r.phases_ms.emplace_back("load", in.load_ms);
  r.phases_ms.emplace_back("setup", t.setup_ms);
  if (on_device) r.phases_ms.emplace_back("h2d", t.h2d_ms);
  r.phases_ms.emplace_back("forward", fwd);
  if (on_device) r.phases_ms.emplace_back("d2h", t.d2h_ms);
  r.phases_ms.emplace_back("total", t.setup_ms + t.h2d_ms + fwd + t.d2h_ms);
}

// The downloaded probabilities against the FP64 reference, then the end-to-end pass (copies overlapping
// compute, where the backend offers it), whose results are validated too and merged into the same record.
void validate_run(Session& session, const RunInput& in, const std::vector<float>& probs, RunRecord& r) {
  r.validation = validate(probs.data(), in.images, *in.reference, in.distinct);
  r.accuracy = accuracy(probs.data(), in.images, in.data->labels);
  std::vector<float> e2e_probs(in.images * kClasses, 0.0f);
  if (const auto e2e = session.end_to_end(in.pixels, in.images, e2e_probs.data())) {
    r.phases_ms.emplace_back("end_to_end", *e2e);
    merge(r.validation, validate(e2e_probs.data(), in.images, *in.reference, in.distinct));
  }
}

// One run: open, upload, warm up, time, download, validate.
RunRecord run_one(const Selected& sel, const RunInput& in, const Options& opt, std::vector<float>& probs) {
  reset_peak_host_memory();
  RunRecord r = start_record(sel, in, opt);
  RunConfig cfg;
  cfg.images = in.images;
  cfg.batch = opt.batch;
  cfg.threads = opt.threads;
  cfg.progress = progress_printer(r.backend + ":" + r.variant, !opt.quiet);

  CopyTimes t;
  StopWatch setup_clock;
  const std::unique_ptr<Session> session = sel.backend->open(r.variant, *in.net, cfg);
  t.setup_ms = setup_clock.ms();
  r.device = sel.backend->availability().device;
  r.device_info = session->device_info();
  r.batch = session->batch();  // resolved by open() from cfg (common/backend.hpp: resolve_batch)
  t.h2d_ms = session->upload(in.pixels, in.images);
  measure(*session, opt, r);
  probs.assign(in.images * kClasses, 0.0f);
  t.d2h_ms = session->download(probs.data());
  record_phases(r, in, t, session->on_device());
  validate_run(*session, in, probs, r);
  r.peak_device_memory_bytes = session->device_memory_bytes();
  r.peak_host_memory_bytes = peak_host_memory_bytes();
  r.load_end = machine_load();
  return r;
}

// ---- the steps of an invocation, in order

// The files the run will read, found without reading them (so that outputs can be checked against them).
struct InputFiles {
  std::vector<fs::path> data;
  fs::path weights_dir;
  std::vector<fs::path> all() const {
    std::vector<fs::path> files = data;
    for (const fs::path& w : weight_files(weights_dir)) files.push_back(w);
    return files;
  }
};

InputFiles find_inputs(const Options& opt) {
  const fs::path embedded = build_info::data_dir();
  std::error_code ec;
  if ((opt.data.empty() || opt.weights.empty()) && !fs::is_directory(embedded, ec)) {
    throw InputError(display(embedded) + ": the suite's data folder is missing (reinstall, or give --data and --weights)");
  }
  InputFiles in;
  std::vector<fs::path> data_paths(opt.data.begin(), opt.data.end());
  if (data_paths.empty()) data_paths.push_back(embedded / "cifar10");
  in.data = cifar10_files(data_paths);
  in.weights_dir = opt.weights.empty() ? embedded / "convnetjs-cifar10" : fs::path(opt.weights);
  return in;
}

struct Inputs {
  Dataset data;
  Network net;
  double load_ms = 0;
};

// Reads only the images the largest run needs.
Inputs load_inputs(const InputFiles& files, std::size_t max_images) {
  StopWatch clock;
  Inputs in{load_cifar10(files.data, max_images), load_network(files.weights_dir), 0};
  in.load_ms = clock.ms();
  return in;
}

std::vector<RunRecord> run_all(const std::vector<Selected>& selected, const Inputs& in,
                               const std::vector<double>& reference, const Options& opt, std::vector<float>& probs,
                               Stdout& out) {
  std::vector<RunRecord> runs;
  for (const std::size_t n : opt.images) {
    const bool cycles = n > in.data.size();
    const std::vector<std::uint8_t> cycled = cycles ? cycled_pixels(in.data, n) : std::vector<std::uint8_t>{};
    const RunInput run_in{&in.net,     &in.data, cycles ? cycled.data() : in.data.pixels.data(),
                          n,           std::min(n, in.data.size()),
                          &reference,  in.load_ms};
    for (const Selected& sel : selected) {
      runs.push_back(run_one(sel, run_in, opt, probs));
      if (!opt.quiet && opt.format == Format::table) out.write(format_run_table(runs.back()));
    }
  }
  return runs;
}

// The report, then the .npy; returns where the report went.
fs::path write_outputs(const OutputPlan& plan, const std::string& report_text, const std::vector<float>& probs,
                       std::size_t last_images) {
  if (plan.report_name_chosen) {
    std::error_code ec;
    fs::create_directories(plan.report.parent_path(), ec);
    if (ec) {
      throw SuiteError(kExitOther, "cannot create directory '" + display(plan.report.parent_path()) + "' (" +
                                       ec.message() + ")");
    }
  }
  const fs::path written = write_file_atomically(
      plan.report, report_text, plan.report_name_chosen ? Publish::no_clobber : Publish::replace);
  note_report_written(written);
  if (!plan.probs.empty()) write_npy(plan.probs, probs.data(), last_images, kClasses);
  return written;
}

std::string stdout_text(const Options& opt, const std::vector<RunRecord>& runs, const nlohmann::ordered_json& report,
                        const fs::path& written) {
  switch (opt.format) {
    case Format::table:
      return opt.quiet ? std::string() : format_summary(runs) + "report: " + display(written) + "\n";
    case Format::json:
      return report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    case Format::gbench:
      return to_gbench(runs, this_machine()).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    case Format::csv:
      return format_csv(runs);
  }
  return {};
}

int validation_exit_code(const std::vector<RunRecord>& runs) {
  int code = kExitOk;
  for (const RunRecord& r : runs) {
    if (r.validation.passed) continue;
    std::cerr << "suite: error: validation failed for " << r.backend << ":" << r.variant << " on " << r.images
              << " images: max |p - p_fp64| " << r.validation.max_abs_prob_diff << " (tolerance "
              << r.validation.tolerance << "), " << r.validation.top1_mismatches << " top-1 mismatches\n";
    code = kExitValidation;
  }
  return code;
}

int run(const Options& opt, const std::vector<std::string>& args, const std::vector<RegistryEntry>& entries) {
  Stdout out;
  if (opt.help) {
    out.write(usage_text());
    return kExitOk;
  }
  if (opt.version) {
    out.write(std::string("suite ") + build_info::version + " (" + build_info::git_commit() + ")\n");
    return kExitOk;
  }
  const Registry reg(entries);
  if (opt.list) {
    out.write(list_text(reg));
    return kExitOk;
  }
  const std::vector<Selected> selected = select_backends(reg, opt.backends, opt.quiet);
  const InputFiles files = find_inputs(opt);
  const OutputPlan plan = plan_outputs(opt, files.all());  // before minutes of work, not after

  const std::size_t max_images = *std::max_element(opt.images.begin(), opt.images.end());
  const Inputs in = load_inputs(files, max_images);

  ReportMeta meta;
  meta.threads_requested = opt.threads;
  meta.label = opt.label;
  meta.command_line = args;
  for (const auto& s : in.data.sources) meta.data_sources.push_back(s);
  meta.weights = in.net.source;
  StopWatch ref_clock;  // on --threads threads, as every CPU backend; refused when their stacks cannot fit
  const std::vector<double> reference =
      reference_probs(in.net, in.data, std::min(max_images, in.data.size()), opt.threads);
  meta.reference_ms = ref_clock.ms();

  std::vector<float> probs;
  const std::vector<RunRecord> runs = run_all(selected, in, reference, opt, probs, out);

  const nlohmann::ordered_json report = make_report(meta, runs);
  // A byte that is not UTF-8 (in a file name, say) is replaced, never a reason to lose finished runs.
  const std::string report_text = report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  const fs::path written = write_outputs(plan, report_text, probs, runs.back().images);
  out.write(stdout_text(opt, runs, report, written));
  if (!opt.quiet && opt.format != Format::table) std::cerr << "suite: report: " << display(written) << "\n";

  int code = validation_exit_code(runs);
  if (out.unseen()) {
    std::cerr << "suite: note: standard output was closed from the start; the report is in " << display(written)
              << "\n";
  } else if (out.error() == EPIPE) {
    std::cerr << "suite: note: standard output was closed before the end; the report is in " << display(written)
              << "\n";
  } else if (out.error() != 0) {
    std::cerr << "suite: error: cannot write to standard output: " << std::strerror(out.error()) << " (the report is in "
              << display(written) << ")\n";
    if (code == kExitOk) code = kExitOther;
  }
  return code;
}

}  // namespace

int suite_main(const std::vector<std::string>& args, const std::vector<RegistryEntry>& registry) {
  install_signal_handlers();
  try {
    return run(parse_command_line(args), args, registry);
  } catch (const SuiteError& e) {
    std::cerr << "suite: error: " << display(e.what()) << "\n";
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::cerr << "suite: error: out of host memory (try fewer --images or a smaller --batch)\n";
    return kExitOther;
  } catch (const std::exception& e) {
    std::cerr << "suite: error: " << display(e.what()) << "\n";
    return kExitOther;
  }
}

}  // namespace cnn
