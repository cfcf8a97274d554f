// The list of backends, generated at configure time by cmake/SuiteBackends.cmake from the backends/
// folders: one entry per programming model, with its factory when built, or why not.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/backend.hpp"

namespace cnn {

struct RegistryEntry {
  std::string name;
  std::unique_ptr<Backend> (*make)();  // nullptr when not built
  std::string not_built_reason;
};

const std::vector<RegistryEntry>& all_backends();

}  // namespace cnn
