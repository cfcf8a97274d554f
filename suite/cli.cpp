#include "suite/cli.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "common/errors.hpp"
#include "common/text.hpp"
#include "suite/build_info.hpp"

namespace cnn {
namespace {

std::vector<std::string> split_commas(const std::string& flag, const std::string& value) {
  if (value.empty()) throw UsageError(flag + ": needs a value");
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {  // "5," and ",5" are both an empty item: std::getline would drop a trailing one
    const std::size_t comma = value.find(',', start);
    const std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw UsageError(flag + " '" + value + "': empty item in the list");
    out.push_back(item);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::size_t parse_count(const std::string& flag, const std::string& text, std::size_t max) {
  std::size_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {  // from_chars takes no sign
    throw UsageError(flag + " '" + text + "': not a positive integer");
  }
  if (ec == std::errc::result_out_of_range || v > max) {
    throw UsageError(flag + " '" + text + "': too large (at most " + std::to_string(max) + ")");
  }
  if (v == 0) throw UsageError(flag + " '" + text + "': must be at least 1");
  return v;
}

}  // namespace

std::string usage_text() {
  return std::string("suite ") + build_info::version + "\n" + R"(usage: suite [--list] [--backend LIST|all] [--images LIST] [--batch N] [--repeat N] [--warmup N]
             [--threads N] [--data PATH...] [--weights DIR] [--output FILE] [--format table|json|csv|gbench]
             [--save-probs FILE.npy] [--label TEXT] [--mpi-mode split|replicate] [--quiet] [--version]

Runs the ConvNetJS CIFAR-10 network on each backend, validates every result against the FP64
reference, prints a table and writes a JSON report.

  --list               every backend and variant, whether it is built and can run here
                       (with --format json: the same for scripts, with each backend's kind)
  --backend LIST       comma-separated: all | NAME (every variant) | NAME:VARIANT   (default: all)
  --images LIST        comma-separated image counts, cycling through the data   (default: 1200)
  --batch N            images per launch/chunk (default: each backend's choice)
  --repeat N           timed forward passes (default: up to 5 within about 1 s)
  --warmup N           untimed passes first (default: 1, none if a pass takes over 1 s)
  --threads N          CPU threads (default: all logical cores)
  --data PATH...       CIFAR-10 batch files or folders holding them (default: embedded 4000 images);
                       takes every following argument up to the next --flag
  --weights DIR        folder of the ConvNetJS weight files (default: embedded)
  --output FILE        JSON report (default: results/local/suite-<UTC time>.json)
  --format FMT         what goes to stdout: table (default), json, csv or gbench (Google Benchmark's
                       JSON layout, for compare.py, github-action-benchmark and Bencher)
  --save-probs FILE    N x 10 float32 probabilities of the last run, as .npy
  --label TEXT         a name for this machine in the report (meta.label): the report tools tell platforms
                       apart by CPU model, cores and GPU, and by this label where those are the same
  --mpi-mode MODE      under mpirun: split (default) shares the images out across the ranks,
                       replicate runs all of them on every rank (only in an MPI job)
  --quiet              no table, no progress (errors still go to stderr; a --format other than
                       table is still printed)
  --version            the suite's version and git commit

exit codes: 0 ok, 1 other error, 2 usage, 3 bad input data or weights, 4 backend not built or no
device, 5 validation failed, 130/143 interrupted by SIGINT/SIGTERM
)";
}

Options parse_command_line(const std::vector<std::string>& args) {
  Options o;
  auto is_flag = [](const std::string& s) { return s.size() > 2 && s.rfind("--", 0) == 0; };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string inline_value;
    bool has_inline = false;
    if (const auto eq = flag.find('='); is_flag(flag) && eq != std::string::npos) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_inline = true;
    }
    auto value = [&]() -> std::string {
      const std::string v = has_inline ? inline_value
                            : (i + 1 >= args.size() || is_flag(args[i + 1])) ? std::string()
                                                                              : args[++i];
      // An empty value would silently mean the default (an empty --output, --weights or --data).
      if (v.empty()) throw UsageError(flag + ": needs a value");
      return v;
    };
    auto int_value = [&](std::size_t max) { return parse_count(flag, value(), max); };

    if (flag == "--list") o.list = true;
    else if (flag == "--help" || flag == "-h") o.help = true;
    else if (flag == "--version") o.version = true;
    else if (flag == "--quiet" || flag == "-q") o.quiet = true;
    else if (flag == "--backend") o.backends = split_commas(flag, value());
    else if (flag == "--images") {
      o.images.clear();
      for (const auto& item : split_commas(flag, value())) o.images.push_back(parse_count(flag, item, kMaxImages));
    } else if (flag == "--batch") o.batch = int_value(kMaxImages);
    else if (flag == "--repeat") o.repeat = int(int_value(100000));
    else if (flag == "--warmup") {
      const std::string v = value();
      o.warmup = v.find_first_not_of('0') == std::string::npos ? 0 : int(parse_count(flag, v, 100000));  // "0", "00"
    } else if (flag == "--threads") o.threads = int(int_value(kMaxThreads));
    else if (flag == "--data") {
      o.data.push_back(value());
      while (!has_inline && i + 1 < args.size() && !is_flag(args[i + 1])) {
        if (args[i + 1].empty()) throw UsageError("--data: an empty path");
        o.data.push_back(args[++i]);
      }
    } else if (flag == "--weights") o.weights = value();
    else if (flag == "--output") o.output = value();
    else if (flag == "--save-probs") o.save_probs = value();
    else if (flag == "--label") {
      o.label = value();
      // Shown in tables and charts of reports from anywhere: only text that display() leaves as it is (no control
      // characters, C1 controls, line separators or direction overrides, which reorder a table's text; valid UTF-8).
      if (o.label.size() > 64 || display(o.label) != o.label)
        throw UsageError("--label: at most 64 bytes of UTF-8, no control characters (nor Unicode's line separators "
                         "and direction overrides)");
    }
    else if (flag == "--mpi-mode") {
      const std::string v = value();
      if (v == "split") o.mpi_mode = MpiMode::split;
      else if (v == "replicate") o.mpi_mode = MpiMode::replicate;
      else throw UsageError("--mpi-mode '" + v + "': expected split or replicate");
      o.mpi_mode_given = true;
    } else if (flag == "--format") {
      const std::string v = value();
      if (v == "table") o.format = Format::table;
      else if (v == "json") o.format = Format::json;
      else if (v == "csv") o.format = Format::csv;
      else if (v == "gbench") o.format = Format::gbench;
      else throw UsageError("--format '" + v + "': expected table, json, csv or gbench");
    } else {
      throw UsageError("unknown argument '" + args[i] + "' (see --help)");
    }
    if (!has_inline) continue;
    if (flag == "--list" || flag == "--help" || flag == "--quiet" || flag == "--version") {
      throw UsageError(flag + " takes no value");
    }
  }
  return o;
}

}  // namespace cnn
