// Facts about the machine a report was taken on.
#pragma once

#include <cstddef>
#include <string>

namespace cnn {

std::string host_name();
std::string cpu_model();
int logical_cores();
std::string utc_now_iso8601();
std::size_t peak_host_memory_bytes();  // resident set high-water mark of this process

}  // namespace cnn
