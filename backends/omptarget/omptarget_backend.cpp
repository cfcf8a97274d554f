// The OpenMP target offload backend: the steps of the OpenACC port, in OpenMP. Always runnable: without a
// GPU (or without GCC's nvptx offload) the target regions run on the host. The variants' code is in the
// shared library omptarget_offload, so they are registered here rather than in their own files.
#include "backends/omptarget/omptarget_offload.hpp"
#include "backends/omptarget/omptarget_runtime.hpp"
#include "common/registry.hpp"

namespace cnn::omptarget {
namespace {

const BackendRegistration kOmpTarget{"omptarget", [] { return Availability{true, "", runtime_facts().device}; }};

const VariantRegistration kNaive{"omptarget", 1, open_naive,
    {"naive", "a target teams distribute parallel for per layer, weights and activations mapped each call", true}};
const VariantRegistration kResident{"omptarget", 2, open_resident,
    {"resident", "the same regions, with weights, images and activations resident on the device", true}};
const VariantRegistration kFlat{"omptarget", 3, open_flat,
    {"flat", "conv+ReLU+pool and FC+softmax fused, one parallel-for-simd loop over images x filter groups x "
              "pixels (openacc:flat's step)", false}};

}  // namespace
}  // namespace cnn::omptarget
