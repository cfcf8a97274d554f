// OpenMP threads against the limits that starting them meets (RLIMIT_AS, `ulimit -v`; memory; RLIMIT_NPROC). libgomp maps a stack
// for each thread it starts at the first parallel region, and when a mapping fails it prints "Thread
// creation failed" and aborts the process (SIGABRT, no clear line); the suite checks before that region.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace cnn {

// The threads an OpenMP region of the CPU run starts: `requested` (--threads) when positive, else OpenMP's
// default (OMP_NUM_THREADS, else the logical cores), capped by OMP_THREAD_LIMIT; 1 without OpenMP.
int openmp_team_size(int requested);

// A stack size written as libgomp reads OMP_STACKSIZE and GOMP_STACKSIZE: a number, optionally followed by
// a unit B, K, M or G (any case; none means K), spaces allowed around both. nullopt where libgomp rejects
// the value ("Invalid value for environment variable") and ignores it.
std::optional<std::size_t> parse_openmp_stacksize(const char* value);

// The stack each OpenMP thread beyond the first maps (with a guard page): OMP_STACKSIZE, else
// GOMP_STACKSIZE, else glibc's default for new threads, which follows RLIMIT_STACK.
std::size_t openmp_thread_stack_size();

// Throws UsageError (exit 2) when RLIMIT_AS is finite and what the process has mapped, plus the stacks of
// `threads` threads, plus a margin for the run's first allocations, exceeds it (the line names the limit, the
// stack size and how many threads would fit); when one stack is larger than RAM plus swap under Linux's
// heuristic overcommit (OMP_STACKSIZE=64G); when the threads exceed RLIMIT_NPROC (`ulimit -u`, not for root).
void require_room_for_thread_stacks(int threads);

// The address space this process has mapped (VmSize, what RLIMIT_AS is checked against); 0 where /proc
// cannot be read.
std::size_t address_space_in_use();

// How many threads, the process's own included, fit under an address-space limit of `limit` bytes with
// `mapped` bytes mapped already, each further thread mapping `stack` bytes rounded up to pages of `page` bytes
// plus a guard page, less a margin of 4 MiB for the run's first allocations.
std::size_t threads_that_fit(std::size_t limit, std::size_t mapped, std::size_t stack, std::size_t page);

// A size in bytes as the messages write it: whole MiB (also from 64 MiB on, rounded down), else whole KiB,
// else bytes.
std::string size_text(std::size_t bytes);

}  // namespace cnn
