// Facts about this build, filled in by CMake (build_info.cpp.in) and, for git, at each build.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cnn::build_info {

extern const char* const version;
extern const char* const compiler_id;
extern const char* const compiler_version;
extern const char* const compiler_flags;  // CMAKE_CXX_FLAGS and the build type's, as the harness got them
// Per folder under backends/: the compiler and flags its files were really compiled with (from
// compile_commands.json at build time; distinct sets joined by " | ").
const std::vector<std::pair<std::string, std::string>>& backend_flags();
extern const char* const build_type;
extern const char* const default_data_dir;
// The embedded data folder: for an installed binary <prefix>/share/cnn-suite/data only (even when it is
// missing); for one in a build tree, the source tree's data/ where it was built or, when the build
// travelled to another machine (a carried build folder), ./data of the current directory.
std::string data_dir();
std::string git_commit();  // "unknown" outside a git checkout
bool git_dirty();

}  // namespace cnn::build_info
