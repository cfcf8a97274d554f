// Where a run's files go, decided and checked before any work: an output is never one of the run's
// inputs (compared by device and inode, so links and other spellings count) nor replaces a file in a folder
// given as input (--data, --weights: the files the run does not read there, a test batch or a README, are
// inputs too; a new name there is fine), the report and the .npy
// are never the same file, an output is never a FIFO or socket (a write would block), its directory can
// take the temporary file, and its name fits the file system. Every refusal is one line.
#pragma once

#include <filesystem>
#include <vector>

#include "suite/cli.hpp"

namespace cnn {

struct OutputPlan {
  std::filesystem::path report;  // "-": standard output
  bool report_name_chosen = false;  // the default name: never replaces a file; its folder is made at the end
  std::filesystem::path probs;   // empty: no .npy
};

// The files the run reads, and the folders it was given to find them in.
struct InputPaths {
  std::vector<std::filesystem::path> files, folders;
};

// Throws UsageError (exit 2) for an output that is an input or an existing file in an input folder, or two
// outputs that are one file, and SuiteError (exit 1) for outputs that cannot be written.
OutputPlan plan_outputs(const Options& opt, const InputPaths& inputs);

// results/local/suite-<UTC time>.json
std::filesystem::path default_report_path();

}  // namespace cnn
