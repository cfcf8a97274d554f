#include "common/text.hpp"

#include <cstdint>
#include <cstdio>

namespace cnn {
namespace {

// Length of the valid UTF-8 sequence starting at s[i] (1-4), or 0 when it is not one; its code point in `cp`.
std::size_t utf8_length(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(s[k]); };
  const std::uint8_t b = byte(i);
  std::size_t n = 0;
  std::uint32_t min = 0;
  cp = b;
  if (b < 0x80) return 1;
  if ((b & 0xE0) == 0xC0) n = 2, min = 0x80;
  else if ((b & 0xF0) == 0xE0) n = 3, min = 0x800;
  else if ((b & 0xF8) == 0xF0) n = 4, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  cp = b & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;  // overlong, surrogate
  return n;
}

// C1 controls, the line and paragraph separators, and the direction embeddings, overrides and isolates: they
// break a line on some terminals or reorder what it shows (a file name that reads as another).
bool is_invisible_control(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string display(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_length(s, i, cp);
    const auto b = static_cast<unsigned char>(s[i]);
    if (n == 0 || (n == 1 && (b < 0x20 || b == 0x7F))) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02X", b);
      out += buf;
      ++i;
      continue;
    }
    if (is_invisible_control(cp)) {
      char buf[12];
      std::snprintf(buf, sizeof buf, "\\u{%04X}", unsigned(cp));
      out += buf;
      i += n;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace cnn
