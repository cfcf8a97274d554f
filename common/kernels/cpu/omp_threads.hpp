// The threads an OpenMP parallel region really gets, so that reports record what ran, not what was asked.
#pragma once

#include <omp.h>

#include <algorithm>

namespace cnn {

// `requested` threads (0: the default, OMP_NUM_THREADS or all cores), capped by OMP_THREAD_LIMIT.
inline int omp_team_size(int requested) {
  const int wanted = requested > 0 ? requested : omp_get_max_threads();
  return std::max(1, std::min(wanted, omp_get_thread_limit()));
}

}  // namespace cnn
