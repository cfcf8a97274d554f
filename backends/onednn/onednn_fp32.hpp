// onednn:fp32's entry points, for its registration and its own tests.
#pragma once

#include <memory>
#include <string>

#include "common/backend.hpp"

namespace cnn::onednn {

std::unique_ptr<Session> open_fp32(const Network& net, const RunConfig& config);
std::string device();  // the availability line: CPU, cores, oneDNN version and ISA

}  // namespace cnn::onednn
