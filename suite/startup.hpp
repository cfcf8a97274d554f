// What the process was started with, checked before anything else runs: standard streams that were
// closed, and thread counts in the environment.
#pragma once

#include <cstddef>

namespace cnn {

// Puts /dev/null on any of descriptors 0, 1 and 2 that is closed, so that no file opened later (a data
// file, the report's temporary file) takes the number and receives what was meant for the terminal.
// Called from suite/main.cpp's .preinit_array, before any library's initialiser can open a file.
void reopen_closed_standard_streams() noexcept;

// Whether standard output was closed when the process started (`suite ... >&-`).
bool stdout_closed_at_start();

// Thread counts from the environment that --threads would refuse (more than kMaxThreads, or not a
// number): every OMP_NUM_THREADS form libgomp reads (a nesting list "4,2", spaces around items, and
// GCC 13's OMP_NUM_THREADS_ALL / _DEV / _DEV_<n>), and a numeric KOKKOS_NUM_THREADS (the Kokkos backend
// checks its other forms itself). Returns false when all is well, else true with the whole error line
// ("suite: error: ...\n") in `message`. No allocation and no exceptions: suite/main.cpp calls it from its
// .preinit_array, because libgomp reads OMP_NUM_THREADS when it is loaded (and prints its own complaint
// about a malformed value) and starts that many threads at the first parallel region (a team of 100000
// crashes inside libgomp); only code that runs before libgomp's initialiser comes before all of that.
bool thread_environment_error(const char* const* envp, char* message, std::size_t size) noexcept;

}  // namespace cnn
