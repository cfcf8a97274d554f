#pragma once

#include <memory>

#include "common/backend.hpp"

namespace cnn::cuda {

std::unique_ptr<Session> open_naive(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_tiled(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_fused(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_fused_batch(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_fused_tf32x3(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_fused_fp16x3(const Network& net, const RunConfig& config);

}  // namespace cnn::cuda
