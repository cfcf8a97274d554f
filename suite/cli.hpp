// The command line of `suite` (README.md, "Command line"). Parsing only: no file or backend is touched.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cnn {

enum class Format { table, json, csv, gbench };

// Under MPI: the images of --images shared out across the ranks, or all of them on every rank.
enum class MpiMode { split, replicate };

struct Options {
  bool list = false;
  bool help = false;
  bool version = false;
  std::vector<std::string> backends{"all"};  // "all", "name" (every variant) or "name:variant"
  std::vector<std::size_t> images{1200};
  std::size_t batch = 0;  // 0: each backend's own choice
  int repeat = 0;         // 0: auto (up to 5 samples within about a second of forward time)
  int warmup = -1;        // -1: auto (one warm-up pass unless the first pass takes over a second)
  int threads = 0;        // 0: all logical cores
  std::vector<std::string> data;  // empty: the embedded default
  std::string weights;            // empty: the embedded default
  std::string output;             // empty: results/local/suite-<UTC>.json
  Format format = Format::table;
  std::string save_probs;
  bool quiet = false;
  std::string label;  // the user's name for this machine, where its CPU and GPU do not tell it apart
  MpiMode mpi_mode = MpiMode::split;
  bool mpi_mode_given = false;  // refused outside an MPI job (suite/runner.cpp)
};

inline constexpr std::size_t kMaxImages = 10'000'000;  // 30 GB of pixels; more is a typo
inline constexpr int kMaxThreads = 4096;  // --threads, and thread counts in the environment (suite/startup.hpp)

// Throws UsageError with one line naming the flag and what is wrong.
Options parse_command_line(const std::vector<std::string>& args);

std::string usage_text();

}  // namespace cnn
