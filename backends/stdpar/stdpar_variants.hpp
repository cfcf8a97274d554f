#pragma once

#include <memory>
#include <string>

#include "common/backend.hpp"

namespace cnn::stdpar {

std::unique_ptr<Session> open_layers(const Network& net, const RunConfig& config);
std::unique_ptr<Session> open_image_blocks(const Network& net, const RunConfig& config);
std::string device();  // the availability line: CPU cores and the library the algorithms run on

}  // namespace cnn::stdpar
