// The harness: selects backends from the registry, runs them, validates, prints, writes the report.
// It knows the Backend interface and nothing of any programming model.
#pragma once

#include <string>
#include <vector>

#include "common/registry.hpp"

namespace cnn {

// Runs `suite` with these arguments against this registry and returns the process exit code.
// Errors are printed as one line "suite: error: ..." on stderr.
int suite_main(const std::vector<std::string>& args, const std::vector<RegistryEntry>& registry);

}  // namespace cnn
