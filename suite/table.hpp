// Human-readable and CSV renderings of run records.
#pragma once

#include <string>
#include <vector>

#include "suite/report.hpp"

namespace cnn {

std::string format_run_table(const RunRecord& r);            // the thesis' per-layer view of one run
std::string format_summary(const std::vector<RunRecord>& runs);  // one line per run
std::string format_csv(const std::vector<RunRecord>& runs);

}  // namespace cnn
