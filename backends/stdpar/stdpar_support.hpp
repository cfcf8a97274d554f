// What the stdpar sessions share. Standard C++ has no way to choose the number of threads of a parallel
// algorithm; libstdc++ runs them in TBB's default arena, so a tbb::global_control caps it while a pass
// runs (--threads). Nor has C++17 a counting iterator: the parallel loops run over a vector of indices.
#pragma once

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <cstddef>
#include <numeric>
#include <vector>

#include "common/backend.hpp"

namespace cnn::stdpar {

// --threads N (0: all cores) for TBB while alive.
class ThreadLimit {
 public:
  explicit ThreadLimit(int threads)
      : control_(tbb::global_control::max_allowed_parallelism, std::size_t(threads)) {}

 private:
  tbb::global_control control_;
};

inline int resolve_threads(const RunConfig& config) {
  return config.threads > 0 ? config.threads : tbb::info::default_concurrency();
}

// 0, 1, ..., n - 1.
inline std::vector<int> indices(std::size_t n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace cnn::stdpar
