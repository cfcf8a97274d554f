#include "suite/runner.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "common/atomic_file.hpp"
#include "common/build_info.hpp"
#include "common/dataset.hpp"
#include "common/errors.hpp"
#include "common/reference.hpp"
#include "common/report.hpp"
#include "common/system_info.hpp"
#include "common/timer.hpp"
#include "suite/cli.hpp"
#include "suite/gbench.hpp"
#include "suite/table.hpp"

namespace cnn {
namespace fs = std::filesystem;

namespace {

// ---- signals: no report is ever half-written, so an interrupted run only needs to say so and go.
extern "C" void on_signal(int sig) {
  remove_pending_temporaries();
  const char* msg = sig == SIGINT ? "\nsuite: error: interrupted by SIGINT, no report written\n"
                                  : "\nsuite: error: terminated by SIGTERM, no report written\n";
  (void)!::write(STDERR_FILENO, msg, std::strlen(msg));
  ::_exit(kExitInterrupted + sig);
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

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

std::vector<Selected> select_backends(const Registry& reg, const std::vector<std::string>& wanted, bool quiet) {
  std::vector<Selected> out;
  const bool all = wanted.size() == 1 && wanted[0] == "all";
  if (all) {
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
  for (const std::string& item : wanted) {
    const auto colon = item.find(':');
    const std::string name = item.substr(0, colon);
    const auto it = std::find_if(reg.backends.begin(), reg.backends.end(),
                                 [&](const auto& p) { return p.first->name == name; });
    if (it == reg.backends.end()) {
      std::string known;
      for (const auto& [e, b] : reg.backends) known += (known.empty() ? "" : ", ") + e->name;
      throw UsageError("--backend '" + item + "': unknown backend (known: " + known + ")");
    }
    const Backend* b = it->second.get();
    if (!b) throw UnavailableError("--backend '" + item + "': " + it->first->not_built_reason);
    const auto variants = b->variants();
    std::vector<VariantInfo> chosen;
    if (colon == std::string::npos) {
      chosen = variants;
    } else {
      const std::string vname = item.substr(colon + 1);
      const auto v = std::find_if(variants.begin(), variants.end(), [&](const auto& x) { return x.name == vname; });
      if (v == variants.end()) {
        std::string known;
        for (const auto& x : variants) known += (known.empty() ? "" : ", ") + x.name;
        throw UsageError("--backend '" + item + "': " + name + " has no variant '" + vname + "' (variants: " +
                         known + ")");
      }
      chosen.push_back(*v);
    }
    const Availability a = b->availability();
    if (!a.runnable) throw UnavailableError("--backend '" + item + "': cannot run here: " + a.reason);
    for (auto& v : chosen) out.push_back({b, v});
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

// ---- one run: open, upload, warm up, time, download, validate
struct RunInput {
  const Network* net;
  const Dataset* data;
  const std::uint8_t* pixels;  // images x kImageBytes
  std::size_t images, distinct;
  const std::vector<double>* reference;  // distinct x 10
  double load_ms;
};

RunRecord run_one(const Selected& sel, const RunInput& in, const Options& opt, std::vector<float>& probs) {
  RunRecord r;
  r.backend = sel.backend->name();
  r.variant = sel.variant.name;
  r.images = in.images;
  r.distinct_images = in.distinct;

  RunConfig cfg;
  cfg.images = in.images;
  cfg.batch = opt.batch;
  cfg.threads = opt.threads;
  cfg.progress = progress_printer(r.backend + ":" + r.variant, !opt.quiet);

  StopWatch setup_clock;
  const std::unique_ptr<Session> session = sel.backend->open(r.variant, *in.net, cfg);
  const double setup_ms = setup_clock.ms();
  r.device = sel.backend->availability().device;
  r.threads = session->threads();
  r.device_info = session->device_info();
  r.batch = session->batch();  // resolved by open() from cfg (common/backend.hpp: resolve_batch)

  const double h2d_ms = session->upload(in.pixels, in.images);

  // Auto mode: one warm-up unless a pass takes over a second (then that pass is the sample);
  // then up to 5 samples within about a second of forward time.
  LayerTimes layers, scratch;
  std::vector<double>& samples = r.forward_samples_ms;
  double spent = 0;
  const int warmups = opt.warmup >= 0 ? opt.warmup : 1;
  for (int w = 0; w < warmups; ++w) {
    scratch.clear();
    const double ms = session->forward(scratch);
    if (opt.warmup < 0 && ms > 1000.0) {  // too slow to waste: keep it as the sample
      samples.push_back(ms);
      spent += ms;
      layers = scratch;
    }
  }
  const int max_samples = opt.repeat > 0 ? opt.repeat : 5;
  while (int(samples.size()) < max_samples && (opt.repeat > 0 || samples.empty() || spent < 1000.0)) {
    scratch.clear();
    const double ms = session->forward(scratch);
    samples.push_back(ms);
    spent += ms;
    if (layers.empty()) {
      layers = scratch;
    } else {
      for (std::size_t i = 0; i < layers.size() && i < scratch.size(); ++i) layers[i].second += scratch[i].second;
    }
  }
  const double n_layer_samples = double(samples.size());
  for (auto& [name, ms] : layers) ms /= n_layer_samples;
  r.layers_ms = layers;

  probs.assign(in.images * kClasses, 0.0f);
  const double d2h_ms = session->download(probs.data());
  const double fwd = r.forward_median_ms();

  r.phases_ms.emplace_back("load", in.load_ms);
  r.phases_ms.emplace_back("setup", setup_ms);
  if (session->on_device()) r.phases_ms.emplace_back("h2d", h2d_ms);
  r.phases_ms.emplace_back("forward", fwd);
  if (session->on_device()) r.phases_ms.emplace_back("d2h", d2h_ms);
  r.phases_ms.emplace_back("total", setup_ms + h2d_ms + fwd + d2h_ms);

  r.validation = validate(probs.data(), in.images, *in.reference, in.distinct);
  r.accuracy = accuracy(probs.data(), in.images, in.data->labels);

  // Copies overlapping compute, where the backend offers it: its results are validated too.
  std::vector<float> e2e_probs(in.images * kClasses, 0.0f);
  if (const auto e2e = session->end_to_end(in.pixels, in.images, e2e_probs.data())) {
    r.phases_ms.emplace_back("end_to_end", *e2e);
    const Validation v = validate(e2e_probs.data(), in.images, *in.reference, in.distinct);
    if (!v.passed) r.validation.passed = false;
    r.validation.max_abs_prob_diff = std::max(r.validation.max_abs_prob_diff, v.max_abs_prob_diff);
    r.validation.top1_mismatches += v.top1_mismatches;
  }
  r.peak_device_memory_bytes = session->device_memory_bytes();
  r.peak_host_memory_bytes = peak_host_memory_bytes();
  return r;
}

fs::path default_report_path() {
  std::string stamp = utc_now_iso8601();
  std::replace(stamp.begin(), stamp.end(), ':', '-');
  return fs::path("results") / "local" / ("suite-" + stamp + ".json");
}

int run(const Options& opt, const std::vector<RegistryEntry>& entries) {
  if (opt.help) {
    std::cout << usage_text();
    return kExitOk;
  }
  const Registry reg(entries);
  if (opt.list) {
    std::cout << list_text(reg);
    return kExitOk;
  }
  const std::vector<Selected> selected = select_backends(reg, opt.backends, opt.quiet);

  // Output paths are checked before minutes of work, not after.
  fs::path report_path = opt.output.empty() ? default_report_path() : fs::path(opt.output);
  for (const fs::path& p : {report_path, fs::path(opt.save_probs)}) {
    if (p.empty()) continue;
    const fs::path dir = p.has_parent_path() ? p.parent_path() : ".";
    std::error_code ec;
    if (opt.output.empty() && p == report_path) fs::create_directories(dir, ec);
    if (!fs::is_directory(dir, ec)) {
      throw SuiteError(kExitOther, p.string() + ": directory '" + dir.string() + "' does not exist");
    }
    if (fs::is_directory(p, ec)) throw SuiteError(kExitOther, p.string() + ": is a directory");
    if (fs::exists(p, ec) && !fs::is_regular_file(p, ec)) continue;  // a device such as /dev/null
    // access(W_OK) says yes to root even on read-only mounts: create and remove a file to be sure.
    const fs::path probe = dir / (".suite-probe." + std::to_string(::getpid()));
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
      throw SuiteError(kExitOther, p.string() + ": directory '" + dir.string() + "' is not writable (" +
                                       std::strerror(errno) + ")");
    }
    ::close(fd);
    ::unlink(probe.c_str());
  }

  StopWatch load_clock;
  const fs::path default_data = build_info::data_dir();
  std::vector<fs::path> data_paths;
  for (const auto& d : opt.data) data_paths.emplace_back(d);
  if (data_paths.empty()) data_paths.push_back(default_data / "cifar10");
  const Dataset data = load_cifar10(data_paths);
  const Network net = load_network(opt.weights.empty() ? default_data / "convnetjs-cifar10" : fs::path(opt.weights));
  const double load_ms = load_clock.ms();

  const std::size_t max_images = *std::max_element(opt.images.begin(), opt.images.end());
  const std::size_t distinct_needed = std::min(max_images, data.size());
  StopWatch ref_clock;
  const std::vector<double> reference = reference_probs(net, data, distinct_needed);
  const double reference_ms = ref_clock.ms();

  std::vector<RunRecord> runs;
  std::vector<float> probs;
  for (const std::size_t n : opt.images) {
    const bool cycles = n > data.size();
    const std::vector<std::uint8_t> cycled = cycles ? cycled_pixels(data, n) : std::vector<std::uint8_t>{};
    const RunInput in{&net,      &data, cycles ? cycled.data() : data.pixels.data(), n, std::min(n, data.size()),
                      &reference, load_ms};
    for (const Selected& sel : selected) {
      runs.push_back(run_one(sel, in, opt, probs));
      if (!opt.quiet && opt.format == Format::table) std::cout << format_run_table(runs.back()) << std::flush;
    }
  }

  ReportMeta meta;
  meta.threads = opt.threads;
  for (const auto& s : data.sources) meta.data_sources.push_back(s);
  meta.weights = net.source;
  nlohmann::ordered_json report = make_report(meta, runs);
  report["meta"]["reference_ms"] = reference_ms;
  write_file_atomically(report_path, report.dump(2) + "\n");
  if (!opt.save_probs.empty()) write_npy(opt.save_probs, probs.data(), runs.back().images, kClasses);

  if (!opt.quiet) {
    if (opt.format == Format::table) std::cout << format_summary(runs) << "report: " << report_path.string() << "\n";
    else if (opt.format == Format::json) std::cout << report.dump(2) << "\n";
    else if (opt.format == Format::gbench) std::cout << to_gbench(report, this_machine()).dump(2) << "\n";
    else std::cout << format_csv(runs);
  }

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

}  // namespace

int suite_main(const std::vector<std::string>& args, const std::vector<RegistryEntry>& registry) {
  install_signal_handlers();
  try {
    return run(parse_command_line(args), registry);
  } catch (const SuiteError& e) {
    std::cerr << "suite: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::cerr << "suite: error: out of host memory (try fewer --images or a smaller --batch)\n";
    return kExitOther;
  } catch (const std::exception& e) {
    std::cerr << "suite: error: " << e.what() << "\n";
    return kExitOther;
  }
}

}  // namespace cnn
