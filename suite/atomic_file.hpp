// Output files appear whole or not at all: written to a temporary file beside the target (a unique
// name from mkstemp, so that two processes, even with the same PID in different containers, never share
// one), flushed, then moved into place. A crash, a full disk or a signal never leaves half a report.
#pragma once

#include <filesystem>
#include <string>

namespace cnn {

enum class Publish {
  replace,    // the user named the file: replace it (rename)
  no_clobber  // a name the suite chose: never replace an existing file; take "<stem>-2<ext>", "-3", ... instead
};

// Writes `content` to `path` ("-" or "/dev/stdout": standard output; a character device such as /dev/null:
// written directly). Returns the path written. Throws SuiteError (exit 1) naming the path when the
// directory is missing, read-only or the disk is full.
std::filesystem::path write_file_atomically(const std::filesystem::path& path, const std::string& content,
                                            Publish mode = Publish::replace);

// N x cols float32 as a NumPy .npy (format 1.0), atomically.
void write_npy(const std::filesystem::path& path, const float* data, std::size_t rows, std::size_t cols);

// Creates and removes a temporary file of the kind write_file_atomically() uses in `dir`: 0 when that
// works, else the errno (access(W_OK) says yes to root even on a read-only mount; this does not).
int probe_temporary_in(const std::filesystem::path& dir);

// "-" and "/dev/stdout" name standard output; they are written to, never replaced.
bool is_standard_output(const std::filesystem::path& path);
// The folder a file goes to ("." for a bare name).
std::filesystem::path directory_of(const std::filesystem::path& path);

// Removes a temporary file still being written (async-signal-safe: called from signal handlers).
void remove_pending_temporaries();

}  // namespace cnn
