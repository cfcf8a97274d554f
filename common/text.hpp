// Text that reaches a terminal or a JSON report: file names and messages may hold any bytes (control
// characters, invalid UTF-8, an embedded NUL). display() escapes those as \xNN so that a message stays
// one whole line and the report writer never meets invalid UTF-8.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace cnn {

// Valid UTF-8 without control characters passes unchanged; every other byte becomes "\xNN", and C1 controls,
// U+2028/2029 and the direction controls (U+202A-202E, U+2066-2069) "\u{XXXX}".
std::string display(std::string_view bytes);
inline std::string display(const std::filesystem::path& p) { return display(std::string_view(p.native())); }
inline std::string display(const char* s) { return display(std::string_view(s)); }
inline std::string display(const std::string& s) { return display(std::string_view(s)); }

}  // namespace cnn
