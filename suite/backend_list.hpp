// `suite --list`: every backend the build knows, in its order, with its kind, whether it was built (or why
// not), whether it can run here (or why not) and its variants; as a table for people or as JSON for scripts
// (`--format json`: scripts/backends reads it, so no script keeps a list of backends of its own).
#pragma once

#include <string>
#include <vector>

#include "common/registry.hpp"
#include "suite/cli.hpp"

namespace cnn {

// Throws UsageError for a format other than table or json.
std::string backend_list(const std::vector<RegistryEntry>& registry, Format format);

}  // namespace cnn
