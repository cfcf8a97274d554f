#include "suite/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>

#include "common/errors.hpp"
#include "common/text.hpp"
#include "common/timer.hpp"
#include "suite/atomic_file.hpp"
#include "suite/backend_list.hpp"
#include "suite/binding.hpp"
#include "suite/build_info.hpp"
#include "suite/cli.hpp"
#include "suite/dataset.hpp"
#include "suite/energy.hpp"
#include "suite/gbench.hpp"
#include "suite/output_plan.hpp"
#include "suite/ranks.hpp"
#include "suite/reference.hpp"
#include "suite/report.hpp"
#include "suite/signals.hpp"
#include "suite/startup.hpp"
#include "suite/system_info.hpp"
#include "suite/table.hpp"
#include "suite/team.hpp"

namespace cnn {
namespace fs = std::filesystem;

namespace {

// ---- standard output: what the user asked to see. A closed pipe (`| head`) or a full disk is noticed
// and reported at the end; it never stops the run or costs the report. A standard output closed from the
// start (`>&-`, /dev/null since suite/startup.cpp) is the user's choice not to see it, and is no error.
class Stdout {
 public:
  explicit Stdout(bool silent) : silent_(silent) {}  // silent: an MPI rank other than 0
  void write(const std::string& s) {
    if (silent_ || error_ != 0 || s.empty()) return;
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
  bool silent_;
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

// One item of --backend: "name" (every variant) or "name:variant"; quiet: no note on stderr.
std::vector<Selected> select_one(const Registry& reg, const std::string& item, bool quiet) {
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
        if (!quiet)
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

// The runs in the order asked for, each backend:variant once ("all,x" is "all").
std::vector<Selected> select_backends(const Registry& reg, const std::vector<std::string>& wanted, bool quiet) {
  std::vector<Selected> out;
  std::set<std::pair<const Backend*, std::string>> seen;
  for (const std::string& item : wanted) {
    for (Selected& s : item == "all" ? all_runnable(reg, quiet) : select_one(reg, item, quiet))
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
  Share share;  // this rank's images of the run (all of them in a single process)
};

// The record's identity and the machine's load before the run (a warning when it is busy).
RunRecord start_record(const Selected& sel, const RunInput& in, const Options& opt) {
  RunRecord r;
  r.backend = sel.backend->name();
  r.variant = sel.variant.name;
  r.arithmetic = sel.variant.arithmetic;
  r.load_start = machine_load();
  // Under MPI the other ranks of the node are the expected load.
  if (!opt.quiet && !launched_by_mpi(::environ) && r.load_start.other_runnable >= std::max(1, logical_cores() / 2)) {
    std::cerr << "suite: warning: the machine is busy (" << r.load_start.other_runnable
              << " other processes runnable, load average " << r.load_start.load_avg_1min << " on " << logical_cores()
              << " cores) before " << r.backend << ":" << r.variant << ": its timings may be unreliable\n";
  }
  r.images = in.images;
  r.distinct_images = in.distinct;
  return r;
}

// One pass on every rank, started together after a barrier; its time is the slowest rank's. The rank's
// own time goes to `own`, where given.
double team_forward(Session& session, LayerTimes& layers, Team& team, std::vector<double>* own = nullptr) {
  team.barrier();
  double ms = 0;
  collectively(team, [&] { ms = session.forward(layers); });
  if (own) own->push_back(ms);
  return team.max(ms);
}

// Auto mode: one warm-up unless a pass takes over a second (then that pass is the first sample).
void warm_up(Session& session, const Options& opt, RunRecord& r, LayerTimes& layers, Team& team,
             std::vector<double>& own) {
  const int warmups = opt.warmup >= 0 ? opt.warmup : 1;
  for (int w = 0; w < warmups; ++w) {
    LayerTimes scratch;
    std::vector<double> own_time;
    const double ms = team_forward(session, scratch, team, &own_time);
    if (opt.warmup < 0 && ms > 1000.0) {  // too slow to waste: keep it as the sample
      r.forward_samples_ms.push_back(ms);
      own.push_back(own_time.back());
      layers = scratch;
    }
  }
}

// --repeat samples, or in auto mode up to 5 within about a second of forward time; layer times summed.
void timed_passes(Session& session, const Options& opt, RunRecord& r, LayerTimes& layers, Team& team,
                  std::vector<double>& own) {
  std::vector<double>& samples = r.forward_samples_ms;
  double spent = 0;
  for (const double ms : samples) spent += ms;
  const int max_samples = opt.repeat > 0 ? opt.repeat : 5;
  while (int(samples.size()) < max_samples && (opt.repeat > 0 || samples.empty() || spent < 1000.0)) {
    LayerTimes scratch;
    const double ms = team_forward(session, scratch, team, &own);
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
  const EnergyCounter energy =
      session.runs_on_gpu() ? EnergyCounter::gpu(r.device_fact("gpu_pci_bus_id")) : EnergyCounter::cpu();
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

// The timed passes, then the mean time of each layer, then the energy (a single rank's: a counter of a CPU
// package or a GPU would count every rank there against one rank's images).
void measure(Session& session, const Options& opt, RunRecord& r, Team& team, std::vector<double>& own) {
  LayerTimes layers;
  warm_up(session, opt, r, layers, team, own);
  timed_passes(session, opt, r, layers, team, own);
  if (team.size() > 1) r.energy_why_not = "not measured under MPI: the ranks share the counters";
  else collectively(team, [&] { measure_energy(session, r); });
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
    r.phases_ms.emplace_back("end_to_end", e2e->ms);
    if (e2e->h2d_pinned_ms) r.phases_ms.emplace_back("h2d_pinned", *e2e->h2d_pinned_ms);
    merge(r.validation, validate(e2e_probs.data(), in.images, *in.reference, in.distinct));
  }
}

// One run: open, upload, warm up, time, download, validate. Every rank runs its share; the ranks agree on
// errors between the phases, and rank 0's record becomes the job's (suite/ranks.hpp).
RunRecord run_one(const Selected& sel, const RunInput& in, const Options& opt, std::vector<float>& probs, Team& team) {
  reset_peak_host_memory();
  RunRecord r = start_record(sel, in, opt);
  RunConfig cfg;
  cfg.images = in.images;
  cfg.batch = opt.batch;
  cfg.threads = opt.threads;
  cfg.progress = progress_printer(r.backend + ":" + r.variant, !opt.quiet);

  CopyTimes t;
  std::unique_ptr<Session> session;
  collectively(team, [&] {
    StopWatch setup_clock;
    session = sel.backend->open(r.variant, *in.net, cfg);
    t.setup_ms = setup_clock.ms();
    r.device = sel.backend->availability().device;
    r.device_info = session->device_info();
    r.batch = session->batch();  // resolved by open() from cfg (common/backend.hpp: resolve_batch)
    t.h2d_ms = session->upload(in.pixels, in.images);
  });
  std::vector<double> own_samples;
  measure(*session, opt, r, team, own_samples);
  collectively(team, [&] {
    probs.assign(in.images * kClasses, 0.0f);
    t.d2h_ms = session->download(probs.data());
    record_phases(r, in, t, session->on_device());
    validate_run(*session, in, probs, r);
    r.peak_device_memory_bytes = session->device_memory_bytes();
    r.peak_host_memory_bytes = peak_host_memory_bytes();
  });
  r.load_end = machine_load();
  const std::vector<std::string> ranks = team.gather(rank_summary(r, in.share, own_samples));
  if (team.is_mpi() && team.rank() == 0) combine_ranks(r, ranks, opt.mpi_mode, in.data->size());
  return r;
}

// ---- the steps of an invocation, in order

// The files the run will read, found without reading them (so that outputs can be checked against them).
struct InputFiles {
  std::vector<fs::path> data;
  std::vector<fs::path> data_folders;  // the --data paths that are folders
  fs::path weights_dir;
  InputPaths paths() const {
    InputPaths p{data, data_folders};
    for (const fs::path& w : weight_files(weights_dir)) p.files.push_back(w);
    p.folders.push_back(weights_dir);
    return p;
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
  for (const fs::path& p : data_paths)
    if (fs::is_directory(p, ec)) in.data_folders.push_back(p);
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

// The images a run of n images gives this rank: from the first image on, the loaded data itself and the
// shared reference; from another image on (split mode, ranks after 0), a slice with a reference of its own.
struct RankImages {
  Dataset slice;
  std::vector<double> reference;
  std::vector<std::uint8_t> cycled;
};

RunInput rank_input(const Inputs& in, const std::vector<double>& reference, const Share& share, int threads,
                    RankImages& own, double& reference_ms) {
  const Dataset* data = &in.data;
  const std::vector<double>* ref = &reference;
  if (share.start != 0) {
    StopWatch clock;
    own.slice = slice_of(in.data, share.start, std::min(share.count, in.data.size()));
    own.reference = reference_probs(in.net, own.slice, own.slice.size(), threads);
    reference_ms += clock.ms();
    data = &own.slice;
    ref = &own.reference;
  }
  const bool cycles = share.count > data->size();
  if (cycles) own.cycled = cycled_pixels(*data, share.count);
  return RunInput{&in.net, data, cycles ? own.cycled.data() : data->pixels.data(), share.count,
                  std::min(share.count, data->size()), ref, in.load_ms, share};
}

std::vector<RunRecord> run_all(const std::vector<Selected>& selected, const Inputs& in,
                               const std::vector<double>& reference, const Options& opt, std::vector<float>& probs,
                               Stdout& out, Team& team, double& reference_ms) {
  std::vector<RunRecord> runs;
  for (const std::size_t n : opt.images) {
    RankImages own;
    RunInput run_in{};
    collectively(team, [&] {
      run_in = rank_input(in, reference, share_of(n, team.rank(), team.size(), opt.mpi_mode), opt.threads, own,
                          reference_ms);
    });
    for (const Selected& sel : selected) {
      runs.push_back(run_one(sel, run_in, opt, probs, team));
      if (!opt.quiet && opt.format == Format::table) out.write(format_run_table(runs.back()));
    }
  }
  return runs;
}

// The images of the shared reference: the most that any run of this rank takes from the first image on.
std::size_t shared_reference_images(const Options& opt, const Team& team, std::size_t loaded) {
  std::size_t most = 0;
  for (const std::size_t n : opt.images) {
    const Share s = share_of(n, team.rank(), team.size(), opt.mpi_mode);
    if (s.start == 0) most = std::max(most, std::min(s.count, loaded));
  }
  return most;
}

// The report, then the .npy; returns where the report went.
fs::path write_outputs(const OutputPlan& plan, const std::string& report_text, const std::vector<float>& probs,
                       std::size_t last_images) {
  if (plan.report_name_chosen) {
    std::error_code ec;
    fs::create_directories(plan.report.parent_path(), ec);
    if (ec) {
      throw SuiteError(kExitOther, display(plan.report) + ": cannot create directory '" +
                                       display(plan.report.parent_path()) + "' (" + ec.message() + ")");
    }
  }
  const fs::path written = write_file_atomically(
      plan.report, report_text, plan.report_name_chosen ? Publish::no_clobber : Publish::replace);
  note_report_written(written, !plan.probs.empty());
  if (!plan.probs.empty()) write_npy(plan.probs, probs.data(), last_images, kClasses);
  note_npy_written();
  return written;
}

std::string stdout_text(const Options& opt, const std::vector<RunRecord>& runs, const nlohmann::ordered_json& report,
                        const fs::path& written) {
  switch (opt.format) {
    case Format::table:
      return opt.quiet ? std::string() : format_summary(runs) + "report: " + display(written) + "\n";
    case Format::json:  // the report itself: printed once where it went to standard output
      return is_standard_output(written) ? std::string()
                                         : report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
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
    for (const std::string& line : validation_failures(r)) std::cerr << "suite: error: " << line << "\n";
    if (!r.validation.passed) code = kExitValidation;
  }
  return code;
}

// Decided before any rank starts work: --mpi-mode only in an MPI job, and a split with an image for each rank.
void check_mpi_options(Options& opt, const Team& team, const RankBinding& binding) {
  if (opt.mpi_mode_given && !team.is_mpi()) {
    throw UsageError(std::string("--mpi-mode: only for a suite started by an MPI launcher (mpirun -n R suite ...)") +
                     (built_with_mpi() ? "" : "; this suite was built without MPI"));
  }
  if (!team.is_mpi()) return;
  for (const std::size_t n : opt.images)
    if (opt.mpi_mode == MpiMode::split && n < std::size_t(team.size()))
      throw UsageError("--images '" + std::to_string(n) + "': fewer images than the " + std::to_string(team.size()) +
                       " ranks that --mpi-mode split shares them out to");
  if (opt.threads == 0) opt.threads = std::max(1, int(binding.cpus.size()));  // the rank's share of the cores
  if (team.rank() != 0) opt.quiet = true;  // rank 0 speaks for the job
}

// What the runs need, each step agreed by every rank: the backends, the input files, the outputs (rank 0's),
// then the data, the weights and the reference of the images that runs take from the first one on.
struct Prepared {
  std::vector<Selected> selected;
  OutputPlan plan;
  Inputs in;
  std::vector<double> reference;
  ReportMeta meta;
};

void prepare(const Registry& reg, const Options& opt, Team& team, Prepared& p) {
  InputFiles files;
  collectively(team, [&] {
    p.selected = select_backends(reg, opt.backends, opt.quiet);
    files = find_inputs(opt);
    if (team.rank() == 0) p.plan = plan_outputs(opt, files.paths());  // before minutes of work, not after
  });
  const std::size_t max_images = *std::max_element(opt.images.begin(), opt.images.end());
  collectively(team, [&] {
    p.in = load_inputs(files, max_images);
    StopWatch ref_clock;
    const std::size_t shared = shared_reference_images(opt, team, p.in.data.size());
    // on --threads threads, as every CPU backend; refused when their stacks cannot fit
    if (shared > 0) p.reference = reference_probs(p.in.net, p.in.data, shared, opt.threads);
    p.meta.reference_ms = ref_clock.ms();
  });
  p.meta.threads_requested = opt.threads;
  p.meta.label = opt.label;
  for (const auto& s : p.in.data.sources) p.meta.data_sources.push_back(s);
  p.meta.weights = p.in.net.source;
}

// The last run's probabilities of every rank, in image order, on rank 0 (split mode's blocks are in rank order).
std::vector<float> gathered_probs(Team& team, const std::vector<float>& probs) {
  const std::vector<std::string> parts =
      team.gather(std::string(reinterpret_cast<const char*>(probs.data()), probs.size() * sizeof(float)));
  std::vector<float> all;
  for (const std::string& part : parts) {
    const std::size_t at = all.size();
    all.resize(at + part.size() / sizeof(float));
    std::memcpy(all.data() + at, part.data(), part.size());
  }
  return all;
}

// Rank 0 writes the report (and the .npy) and prints; returns the exit code.
int publish(const Options& opt, const Prepared& p, const std::vector<RunRecord>& runs, const std::vector<float>& probs,
            Stdout& out) {
  const nlohmann::ordered_json report = make_report(p.meta, runs);
  // A byte that is not UTF-8 (in a file name, say) is replaced, never a reason to lose finished runs.
  const std::string report_text = report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  const fs::path written = write_outputs(p.plan, report_text, probs, runs.back().images);
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

// --help, --version, --list: their text is all they do, so a full disk is an error (a closed pipe is not: `| head`).
int printed(const Stdout& out) {
  if (out.error() == 0 || out.error() == EPIPE) return kExitOk;
  std::cerr << "suite: error: cannot write to standard output: " << std::strerror(out.error()) << "\n";
  return kExitOther;
}

int run(Options opt, const std::vector<std::string>& args, const std::vector<RegistryEntry>& entries, Team& team,
        const RankBinding& binding) {
  Stdout out(team.rank() != 0);
  if (opt.help) {
    out.write(usage_text());
    return printed(out);
  }
  if (opt.version) {
    out.write(std::string("suite ") + build_info::version + " (" + build_info::git_commit() + ")\n");
    return printed(out);
  }
  collectively(team, [&] { check_mpi_options(opt, team, binding); });
  const Registry reg(entries);
  if (opt.list) {
    out.write(backend_list(entries, opt.format));
    return printed(out);
  }
  Prepared p;
  prepare(reg, opt, team, p);
  p.meta.command_line = args;
  const std::vector<std::string> bindings = team.gather(binding_summary(binding, opt.threads));
  if (team.is_mpi()) p.meta.mpi = mpi_meta(opt.mpi_mode, bindings);

  std::vector<float> probs;
  const std::vector<RunRecord> runs = run_all(p.selected, p.in, p.reference, opt, probs, out, team, p.meta.reference_ms);
  if (!opt.save_probs.empty() && team.size() > 1 && opt.mpi_mode == MpiMode::split) probs = gathered_probs(team, probs);
  int code = kExitOk;
  collectively(team, [&] {
    if (team.rank() == 0) code = publish(opt, p, runs, probs, out);
  });
  return int(team.max(double(code)));  // rank 0's, on every rank
}

// An error line echoes what it was given (a 100 KB --backend was a 100 KB line): kept to a readable length, cut
// between UTF-8 sequences.
std::string shortened(std::string line) {
  constexpr std::size_t kMax = 1000;
  if (line.size() <= kMax) return line;
  std::size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  const std::size_t left = line.size() - cut;
  line.resize(cut);
  return line + "... (" + std::to_string(left) + " more bytes)";
}

}  // namespace

int suite_main(const std::vector<std::string>& args, const std::vector<RegistryEntry>& registry) {
  install_signal_handlers();
  const std::unique_ptr<Team> team = make_team();
  const RankBinding binding = bind_rank(*team);
  int code = 0;
  try {
    Options opt;
    collectively(*team, [&] { opt = parse_command_line(args); });
    code = run(opt, args, registry, *team, binding);
  } catch (const AgreedError& e) {  // every rank has it: rank 0 says it
    if (team->rank() == 0) std::cerr << "suite: error: " << shortened(display(e.what())) << "\n";
    code = e.exit_code();
  } catch (...) {  // this rank's alone: it says so, and the job cannot end together
    const auto [own, message] = current_error();
    std::cerr << "suite: error: " << (team->size() > 1 ? "rank " + std::to_string(team->rank()) + ": " : "")
              << shortened(display(message)) << "\n";
    note_outcome(own);
    team->abort(own);
    return own;
  }
  // Said: what follows is MPI's teardown (the team's destructor), during which mpirun may terminate this
  // rank because another one has already exited with the same error. No rank exits before rank 0 has said it.
  note_outcome(code);
  team->barrier();
  return code;
}

}  // namespace cnn
