#pragma once

#include <memory>

#include "common/backend.hpp"

namespace cnn::openmp {

std::unique_ptr<Session> open_naive(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_batch(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_winograd(const Network& net, const RunConfig& config);

}  // namespace cnn::openmp
