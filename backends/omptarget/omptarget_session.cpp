// OpenMP's data directives for the shared session (common/kernels/offload/offload_session.hpp). The
// arrays are mapped as bytes: the runtime keys mapped data by address range, so the target regions' map
// clauses on the same floats find them present and copy nothing.
#include "backends/omptarget/omptarget_session.hpp"

#include "backends/omptarget/omptarget_runtime.hpp"

namespace cnn::omptarget {
namespace {

// GCC 12 warns that a local named only in a data map is unused (the directive is still
// emitted), hence [[maybe_unused]].
void copy_in(const void* p, std::size_t bytes) {
  [[maybe_unused]] const auto* b = static_cast<const unsigned char*>(p);
#pragma omp target enter data map(to : b[0:bytes])
}

void alloc(const void* p, std::size_t bytes) {
  [[maybe_unused]] const auto* b = static_cast<const unsigned char*>(p);
#pragma omp target enter data map(alloc : b[0:bytes])
}

void update_host(void* p, std::size_t bytes) {
  [[maybe_unused]] auto* b = static_cast<unsigned char*>(p);
#pragma omp target update from(b[0:bytes])
}

void remove(const void* p, std::size_t bytes) {
  [[maybe_unused]] const auto* b = static_cast<const unsigned char*>(p);
#pragma omp target exit data map(delete : b[0:bytes])
}

}  // namespace

const offload::DataDirectives kDirectives{copy_in, alloc, update_host, remove, runtime_facts};

}  // namespace cnn::omptarget
