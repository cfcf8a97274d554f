// OpenACC's data directives for the host-side session that openacc and omptarget share
// (common/kernels/offload/offload_session.hpp). On the host fallback every data directive is a no-op
// and the host arrays are used.
#pragma once

#include "common/kernels/offload/offload_session.hpp"

namespace cnn::openacc {

// enter data copyin/create, update self, exit data delete (openacc_session.cpp)
extern const offload::DataDirectives kDirectives;

}  // namespace cnn::openacc
