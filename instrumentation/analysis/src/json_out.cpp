// SPDX-License-Identifier: Apache-2.0
// json_out.cpp - string escaping (with UTF-8 validation) and doubles.
#include "lantern/analysis/json_out.hpp"

#include <cmath>

namespace lantern::analysis {
namespace {

// utf8_length: the length of the valid UTF-8 sequence starting at s[i], or 0.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n;
  std::uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0)
    n = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0)
    n = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0)
    n = 4, cp = c & 0x07;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (cc & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are invalid too.
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

JsonOut& JsonOut::string(std::string_view text) {
  buffer_.push_back('"');
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {  // not UTF-8: U+FFFD, escaped so that the output stays plain ASCII here
      buffer_.append("\\ufffd");
      ++i;
      continue;
    }
    if (n > 1) {
      buffer_.append(text.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
      case '"': buffer_.append("\\\""); break;
      case '\\': buffer_.append("\\\\"); break;
      case '\n': buffer_.append("\\n"); break;
      case '\t': buffer_.append("\\t"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char tmp[8];
          std::snprintf(tmp, sizeof tmp, "\\u%04x", static_cast<unsigned>(c));
          buffer_.append(tmp);
        } else {
          buffer_.push_back(c);
        }
    }
    ++i;
  }
  buffer_.push_back('"');
  maybe_flush();
  return *this;
}

JsonOut& JsonOut::f64(double v) {
  if (!std::isfinite(v)) return raw("null");  // JSON has no NaN or infinity
  return number(v);
}

JsonOut& JsonOut::fixed(double v, int decimals) {
  if (!std::isfinite(v)) return raw("null");
  char tmp[400];  // the largest double with decimals: 309 integer digits and the fraction
  const auto result = std::to_chars(tmp, tmp + sizeof tmp, v, std::chars_format::fixed, decimals);
  if (result.ec != std::errc{}) return f64(v);  // more decimals than fit: shortest form
  buffer_.append(tmp, static_cast<std::size_t>(result.ptr - tmp));
  maybe_flush();
  return *this;
}

}  // namespace lantern::analysis
