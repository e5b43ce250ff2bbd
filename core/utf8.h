// UTF-8 validity, as Protobuf checks it for proto3 `string` fields: well-formed sequences of
// Unicode scalar values only (no overlong forms, no surrogates, nothing above U+10FFFF).
//
// Utf8SequenceLength is inline and depends on nothing, so that longhaul-shim (plain POSIX, no
// longhaul libraries) uses the same rule as the agent and the coordinator.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace longhaul {

// The length (1 to 4) of the well-formed UTF-8 sequence that starts at s[i], or 0 when the
// bytes there do not start one. Requires i < s.size().
inline size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = at(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((at(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

bool IsValidUtf8(std::string_view s);

// `s` with every byte that does not belong to a well-formed sequence replaced by U+FFFD (one
// per byte). `replaced`, when given, is set to the number of bytes replaced.
std::string ToValidUtf8(std::string_view s, size_t* replaced = nullptr);

}  // namespace longhaul
