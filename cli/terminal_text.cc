#include "cli/terminal_text.h"

#include <cstdio>

#include "core/utf8.h"

namespace longhaul::cli {
namespace {

void AppendHexByte(std::string& out, unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

void AppendCodePoint(std::string& out, unsigned cp) {
  char buf[12];
  std::snprintf(buf, sizeof buf, "\\u%04x", cp);
  out += buf;
}

// The code point of the well-formed sequence s[i, i+n).
unsigned DecodeUtf8(std::string_view s, size_t i, size_t n) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (n == 1) return at(0);
  unsigned cp = at(0) & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (at(k) & 0x3F);
  return cp;
}

// Code points that reorder text on screen: embeddings, overrides and isolates.
bool IsBidiControl(unsigned cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// The one escaping rule (terminal_text.h), for `s` whole; `keep_lines` keeps LF and TAB.
void AppendTerminalSafe(std::string& out, std::string_view s, bool keep_lines) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      ++i;
      if (keep_lines && (c == '\n' || c == '\t')) {
        out += static_cast<char>(c);
        continue;
      }
      switch (c) {
        case 0x1B:
          out += "\\e";
          break;
        case '\a':
          out += "\\a";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\v':
          out += "\\v";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\r':
          out += "\\r";
          break;
        default:
          AppendHexByte(out, c);
      }
      continue;
    }
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      AppendHexByte(out, c);
      ++i;
      continue;
    }
    unsigned cp = DecodeUtf8(s, i, n);
    if ((cp >= 0x80 && cp <= 0x9F) || IsBidiControl(cp)) {
      AppendCodePoint(out, cp);
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
}

// How many bytes at the end of `s` start a UTF-8 sequence that more bytes could complete.
size_t IncompleteTail(std::string_view s) {
  for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    unsigned char c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

}  // namespace

std::string TerminalSafe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  AppendTerminalSafe(out, s, /*keep_lines=*/false);
  return out;
}

std::string TerminalSafeLog::Feed(std::string_view chunk) {
  pending_.append(chunk);
  size_t keep = IncompleteTail(pending_);
  std::string out;
  out.reserve(pending_.size());
  AppendTerminalSafe(out, std::string_view(pending_).substr(0, pending_.size() - keep),
                     /*keep_lines=*/true);
  pending_.erase(0, pending_.size() - keep);
  return out;
}

std::string TerminalSafeLog::Finish() {
  std::string out;
  AppendTerminalSafe(out, pending_, /*keep_lines=*/true);
  pending_.clear();
  return out;
}

}  // namespace longhaul::cli
