// The one JSON string escaper for JSON written by hand (where building an nlohmann::json would
// cost too much, or the program links no JSON library). For valid UTF-8, the same bytes as
// nlohmann::json's dump(): '"' and '\' backslashed; \b \f \n \r \t; the other control
// characters as \u00XX; everything else as it is. A byte that starts no well-formed UTF-8
// sequence becomes U+FFFD, so the result is always valid JSON.
//
// Not for other escaping: Prometheus label values (core/metrics.h), Slack's mrkdwn
// (daemon/notify/event.cc) and terminal text (cli/terminal_text.h) have rules of their own.
//
// Inline and dependent only on core/utf8.h, so that longhaul-shim (no longhaul libraries)
// writes its JSON with it too.
#pragma once

#include <string>
#include <string_view>

#include "core/utf8.h"

namespace longhaul {

// Appends `s` as a JSON string literal, quotes included.
inline void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        } else if (size_t n = Utf8SequenceLength(s, i); n > 0) {
          out.append(s.data() + i, n);
          i += n;
          continue;
        } else {
          out += "\xEF\xBF\xBD";
        }
    }
    ++i;
  }
  out += '"';
}

// `s` as a JSON string literal, quotes included.
inline std::string JsonQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendJsonString(out, s);
  return out;
}

}  // namespace longhaul
