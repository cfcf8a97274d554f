// Facts about this build, filled in by CMake (build_info.cpp.in) and, for git, at each build.
#pragma once

#include <string>

namespace cnn::build_info {

extern const char* const version;
extern const char* const compiler_id;
extern const char* const compiler_version;
extern const char* const compiler_flags;
extern const char* const build_type;
extern const char* const default_data_dir;
// The embedded data folder: the source tree's data/ where this binary was built or, when the build
// travelled to another machine (a carried build folder), ./data of the current directory.
std::string data_dir();
std::string git_commit();  // "unknown" outside a git checkout
bool git_dirty();

}  // namespace cnn::build_info
