// The CUDA backend: built wherever nvcc is found, runnable where a CUDA device is. Its variants register
// themselves in their files.
#include "common/kernels/cuda/cuda_support.hpp"
#include "common/registry.hpp"

namespace cnn::cuda {
namespace {

const BackendRegistration kCuda{"cuda", [] { return availability(); }};

}  // namespace
}  // namespace cnn::cuda
