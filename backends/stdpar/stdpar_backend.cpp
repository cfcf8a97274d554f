// The stdpar backend: C++17 parallel algorithms, which libstdc++ runs on oneTBB. Always runnable on the CPU;
// its variants register themselves in their files.
#include <tbb/info.h>
#include <tbb/version.h>

#include <string>

#include "backends/stdpar/stdpar_support.hpp"
#include "common/registry.hpp"

namespace cnn::stdpar {
namespace {

std::string device() {
  return "CPU, " + std::to_string(all_cores()) + " cores (libstdc++ parallel algorithms on oneTBB " +
         TBB_VERSION_STRING + ")";
}

const BackendRegistration kStdpar{"stdpar", [] { return Availability{true, "", device()}; }};

}  // namespace
}  // namespace cnn::stdpar
