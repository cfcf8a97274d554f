// What the ranks of an MPI job share and how rank 0 makes one report of their runs (README, "Under MPI").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/binding.hpp"
#include "suite/cli.hpp"
#include "suite/dataset.hpp"
#include "suite/report.hpp"

namespace cnn {

// The images [start, start + count) of a run of `images` (cycling through the data) that `rank` runs:
// split gives each rank a contiguous block, the remainder one each to the first ranks; replicate all of them.
struct Share {
  std::size_t start = 0, count = 0;
};
Share share_of(std::size_t images, int rank, int ranks, MpiMode mode);

// `count` (at most data.size()) images from image `start` on, cycling: the data of a rank's block, so that
// image j of the block is image (start + j) % data.size() of the data.
Dataset slice_of(const Dataset& data, std::size_t start, std::size_t count);

// What a rank tells rank 0 of one run: its block, its own forward times and its validation.
std::string rank_summary(const RunRecord& own, const Share& share, const std::vector<double>& own_samples_ms);

// On rank 0, whose record's forward samples are already the slowest rank's of each pass: the job's record,
// with images, validation and accuracy over every rank's block, and the per-rank figures under "mpi".
// `loaded`: the images read (rank 0's blocks start at the first one).
void combine_ranks(RunRecord& r, const std::vector<std::string>& summaries, MpiMode mode, std::size_t loaded);

// The lines naming each rank whose validation failed, e.g. "rank 1: validation failed for ...".
std::vector<std::string> validation_failures(const RunRecord& r);

std::string binding_summary(const RankBinding& b, int threads);
nlohmann::ordered_json mpi_meta(MpiMode mode, const std::vector<std::string>& bindings);

}  // namespace cnn
