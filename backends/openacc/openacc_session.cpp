// OpenACC's data directives for the shared session (common/kernels/offload/offload_session.hpp). The
// arrays are named as bytes: the runtime keys present data by address range, so the compute regions'
// `present` clauses on the same floats find them.
#include "backends/openacc/openacc_session.hpp"

#include "backends/openacc/openacc_runtime.hpp"

namespace cnn::openacc {
namespace {

// GCC 12 warns that a local named only in a data clause is unused (the directive is still
// emitted), hence [[maybe_unused]].
void copy_in(const void* p, std::size_t bytes) {
  [[maybe_unused]] const auto* b = static_cast<const unsigned char*>(p);
#pragma acc enter data copyin(b[0:bytes])
}

void alloc(const void* p, std::size_t bytes) {
  [[maybe_unused]] const auto* b = static_cast<const unsigned char*>(p);
#pragma acc enter data create(b[0:bytes])
}

void update_host(void* p, std::size_t bytes) {
  [[maybe_unused]] auto* b = static_cast<unsigned char*>(p);
#pragma acc update self(b[0:bytes])
}

void remove(const void* p, std::size_t bytes) {
  [[maybe_unused]] const auto* b = static_cast<const unsigned char*>(p);
#pragma acc exit data delete(b[0:bytes])
}

}  // namespace

const offload::DataDirectives kDirectives{copy_in, alloc, update_host, remove, runtime_facts};

}  // namespace cnn::openacc
