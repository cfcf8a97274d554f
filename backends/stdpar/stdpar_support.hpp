// What the stdpar sessions share. Standard C++ has no way to choose the number of threads of a parallel
// algorithm; libstdc++ runs them in TBB's default arena, so a tbb::global_control caps it while a pass
// runs (--threads). Nor has C++17 a counting iterator: the parallel loops run over a vector of indices.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <tbb/global_control.h>
#include <tbb/info.h>

#include <cstddef>
#include <numeric>
#include <vector>

#include "common/backend.hpp"

namespace cnn::stdpar {

// Every core the process may use, for the calling thread while alive. With OMP_PROC_BIND set (the suite
// sets it, as Kokkos asks) libgomp binds the thread that started OpenMP to one core, and oneTBB's workers
// inherit the affinity of the thread that creates them and size themselves by it: on the Xeon host of the
// GPU machine stdpar ran on 1 of 16 cores (2174 ms at 50000 images; 180 ms unbound). The kernel keeps the
// mask inside the process's cpuset, so asking for every CPU is safe.
class WholeMachine {
 public:
  WholeMachine() {
    ok_ = pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) == 0;
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
    if (ok_) ok_ = pthread_setaffinity_np(pthread_self(), sizeof all, &all) == 0;
  }
  ~WholeMachine() {
    if (ok_) pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_);
  }
  WholeMachine(const WholeMachine&) = delete;
  WholeMachine& operator=(const WholeMachine&) = delete;

 private:
  cpu_set_t saved_;
  bool ok_ = false;
};

// --threads N (0: all cores) for TBB while alive, on the whole machine (WholeMachine).
class ThreadLimit {
 public:
  explicit ThreadLimit(int threads)
      : control_(tbb::global_control::max_allowed_parallelism, std::size_t(threads)) {}

 private:
  WholeMachine machine_;
  tbb::global_control control_;
};

inline int all_cores() {
  const WholeMachine machine;
  return tbb::info::default_concurrency();
}

inline int resolve_threads(const RunConfig& config) { return config.threads > 0 ? config.threads : all_cores(); }

// 0, 1, ..., n - 1.
inline std::vector<int> indices(std::size_t n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace cnn::stdpar
