// OpenMP's data directives for the host-side session that omptarget and openacc share
// (common/kernels/offload/offload_session.hpp). On the host fallback every map is a no-op and the host
// arrays are used.
#pragma once

#include "common/kernels/offload/offload_session.hpp"

namespace cnn::omptarget {

// target enter data map(to/alloc), target update from, target exit data map(delete) (omptarget_session.cpp)
extern const offload::DataDirectives kDirectives;

}  // namespace cnn::omptarget
