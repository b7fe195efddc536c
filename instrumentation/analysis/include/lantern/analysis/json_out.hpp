// SPDX-License-Identifier: Apache-2.0
// json_out.hpp - Lantern's one JSON writer: every JSON that lantern-trace prints (stats
// --json, export --chrome, diff --json through write_json in compare.hpp) goes through it.
//
// An export of ten million events is a gigabyte of JSON, so this writes through a large
// buffer with std::to_chars, never building a document in memory. It does what those
// outputs need: raw punctuation, escaped strings, integers, doubles (shortest or with a
// fixed number of decimals), and timestamps in microseconds with exactly three decimals
// (integer arithmetic, so no float rounding can print "1.9999999" or lose ordering).
//
// No Debian JSON library fits. nlohmann-json3-dev (the tests' parser) writes by dumping
// json values built in memory (for the export: a value for each of millions of events). libsimdjson-dev 3.0 parses
// only. rapidjson-dev 1.1.0's Writer streams, but it copies invalid UTF-8 through or, when told to validate, stops at
// it, so the escaping below would still be needed, and the export's exact times would go in as raw text. Strings are
// where a JSON writer goes wrong; here they always come out valid UTF-8 (see string()).
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace lantern::analysis {

// JsonOut writes one JSON text to `file` through a 1 MiB buffer; the caller writes the
// punctuation (raw) between the values. flush() and failed() say whether `file` took it all.
class JsonOut {
 public:
  explicit JsonOut(std::FILE* file) : file_(file) { buffer_.reserve(kFlushAt + 4096); }
  ~JsonOut() { flush(); }

  JsonOut& raw(std::string_view text) {
    buffer_.append(text);
    maybe_flush();
    return *this;
  }
  // string writes a quoted, escaped JSON string: '"', '\\' and control characters are
  // escaped, valid UTF-8 is copied as it is, and each byte that is not part of valid
  // UTF-8 (a label with byte 0xff) becomes \ufffd, the replacement character, as a
  // decoder with errors="replace" would read it. The output is always valid UTF-8 JSON.
  JsonOut& string(std::string_view text);
  JsonOut& u64(std::uint64_t v) { return number(v); }
  JsonOut& i64(std::int64_t v) { return number(v); }
  JsonOut& boolean(bool v) { return raw(v ? "true" : "false"); }
  // f64 writes the shortest text that reads back as v; fixed writes `decimals` digits
  // after the point. JSON has no NaN or infinity: both write null for those.
  JsonOut& f64(double v);
  JsonOut& fixed(double v, int decimals);
  // binary_micros writes q/1024 microseconds exactly (q: a count of 1/1024 us, which is
  // what the Chrome export's times are): the decimal text has at most 10 fraction digits
  // and parses back to exactly q/1024, so ts + dur of two such values is exact too.
  JsonOut& binary_micros(std::uint64_t q) {
    number(q >> 10);
    std::uint64_t frac = (q & 1023) * 9765625ull;  // 1/1024 = 0.0009765625
    if (frac == 0) return *this;
    char digits[11] = {'.'};
    for (int i = 10; i >= 1; --i, frac /= 10) digits[i] = static_cast<char>('0' + frac % 10);
    int len = 11;
    while (digits[len - 1] == '0') --len;
    buffer_.append(digits, static_cast<std::size_t>(len));
    return *this;
  }
  // micros writes a nanosecond count as microseconds with exactly three decimals.
  JsonOut& micros(std::uint64_t ns) {
    number(ns / 1000);
    char frac[4] = {'.', static_cast<char>('0' + ns / 100 % 10), static_cast<char>('0' + ns / 10 % 10),
                    static_cast<char>('0' + ns % 10)};
    buffer_.append(frac, 4);
    return *this;
  }

  // flush writes the buffer; false if the file reported an error (now or before).
  bool flush() {
    if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) failed_ = true;
    buffer_.clear();
    return !failed_;
  }
  bool failed() const noexcept { return failed_; }

 private:
  static constexpr std::size_t kFlushAt = 1u << 20;
  template <typename T>
  JsonOut& number(T v) {
    char tmp[32];
    const auto result = std::to_chars(tmp, tmp + sizeof tmp, v);
    // (pointer, length), not append(first, last): GCC 12 misreads the iterator form's
    // inlined replace() as an overlapping memcpy (-Wrestrict) in Release builds.
    buffer_.append(tmp, static_cast<std::size_t>(result.ptr - tmp));
    maybe_flush();
    return *this;
  }
  void maybe_flush() {
    if (buffer_.size() >= kFlushAt) flush();
  }

  std::FILE* file_;
  std::string buffer_;
  bool failed_ = false;
};

}  // namespace lantern::analysis
