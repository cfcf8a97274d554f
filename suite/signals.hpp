// Signals while the suite runs. A terminating signal (INT, TERM, HUP, USR1, USR2, ALRM, XCPU) removes the
// temporary file in flight, says on stderr what was and was not written, and exits 128 + signal.
// A signal the parent set to be ignored (nohup, background jobs) stays ignored. SIGPIPE is ignored so
// that a closed standard output is an error to handle, not the end of the process: the report is the
// product, and it is written whatever happens to stdout. SIGXFSZ is ignored for the same reason: a file
// over `ulimit -f` is a write error (EFBIG) reported like a full disk.
#pragma once

#include <filesystem>

namespace cnn {

void install_signal_handlers();

// From now on an interruption says that the report is at `path`, and that the .npy is not written where
// `npy_follows`, until note_npy_written().
void note_report_written(const std::filesystem::path& path, bool npy_follows);
void note_npy_written();

// The run's outcome is decided and said (its report, its one error line): a terminating signal from now on
// ends the process with `exit_code` and says nothing more. Under mpirun, the first rank to exit with an error
// makes mpirun terminate the others, which may still be tearing MPI down after saying the same error.
void note_outcome(int exit_code);

}  // namespace cnn
