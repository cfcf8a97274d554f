// The oneDNN backend: the CPU vendor yardstick, as cudnn is on the GPU. Its variant registers itself.
#include "backends/onednn/onednn_fp32.hpp"
#include "common/registry.hpp"

namespace cnn::onednn {
namespace {

const BackendRegistration kOneDnn{"onednn", [] { return Availability{true, "", device()}; }};

}  // namespace
}  // namespace cnn::onednn
