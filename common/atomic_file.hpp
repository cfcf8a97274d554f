// Output files appear whole or not at all: written to a temporary file beside the target, flushed,
// then renamed over it. A crash, a full disk or a signal never leaves half a report.
#pragma once

#include <filesystem>
#include <string>

namespace cnn {

// Throws SuiteError (exit 1) naming the path when the directory is missing, read-only or the disk is full.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// N x cols float32 as a NumPy .npy (format 1.0), atomically.
void write_npy(const std::filesystem::path& path, const float* data, std::size_t rows, std::size_t cols);

// Removes a temporary file still being written (called from the signal handler path).
void remove_pending_temporaries();

}  // namespace cnn
