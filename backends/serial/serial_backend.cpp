// The serial backend: always runnable, on one CPU thread. Its variants register themselves in their files.
#include "common/registry.hpp"

namespace cnn::serial {
namespace {

const BackendRegistration kSerial{"serial", [] { return Availability{true, "", "CPU, 1 thread"}; }};

}  // namespace
}  // namespace cnn::serial
