// The OpenACC backend: always runnable, since without a GPU (or without GCC's nvptx offload) the same
// regions run on the host. Its variants register themselves in their files.
#include "backends/openacc/openacc_runtime.hpp"
#include "common/registry.hpp"

namespace cnn::openacc {
namespace {

const BackendRegistration kOpenAcc{"openacc", [] { return Availability{true, "", runtime_facts().device}; }};

}  // namespace
}  // namespace cnn::openacc
