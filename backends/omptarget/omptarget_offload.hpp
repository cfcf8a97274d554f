// The entry points of the omptarget variants, which live in the shared library omptarget_offload (GCC 12
// cannot link OpenACC and OpenMP offload images into one program; see CMakeLists.txt). Their registrations
// are in omptarget_backend.cpp, in the backend's static library: a registration inside the shared library
// would fill a second copy of the registry.
#pragma once

#include <memory>

#include "common/backend.hpp"

namespace cnn::omptarget {

std::unique_ptr<Session> open_naive(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_resident(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_flat(const Network& net, const RunConfig& config);

}  // namespace cnn::omptarget
