#pragma once

#include <memory>

#include "common/backend.hpp"

namespace cnn::openacc {

std::unique_ptr<Session> open_naive(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_data(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_gangs(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_batch(const Network& net, const RunConfig& config);

}  // namespace cnn::openacc
