#pragma once

#include <memory>

#include "common/backend.hpp"

namespace cnn::kokkos {

std::unique_ptr<Session> open_naive(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_team(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_tiled(const Network& net, const RunConfig& config);

}  // namespace cnn::kokkos
