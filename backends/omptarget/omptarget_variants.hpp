#pragma once

#include <memory>

#include "common/backend.hpp"

namespace cnn::omptarget {

std::unique_ptr<Session> open_layers(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_resident(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_fused(const Network& net, const RunConfig& config);

}  // namespace cnn::omptarget
