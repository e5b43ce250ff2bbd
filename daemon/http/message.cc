#include "daemon/http/message.h"

#include <iterator>

#include "core/strings.h"

namespace longhaul::http {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `s`; in a query, '+' is a space.
Result<std::string> Decode(std::string_view s, bool query) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '+' && query) {
      out += ' ';
    } else if (c == '%') {
      int hi = i + 2 < s.size() + 0 ? HexValue(s[i + 1]) : -1;
      int lo = i + 2 < s.size() + 0 ? HexValue(s[i + 2]) : -1;
      if (i + 2 >= s.size() || hi < 0 || lo < 0) {
        return absl::InvalidArgumentError(
            StrCat("bad percent escape at byte ", i, " of '", std::string(s), "'"));
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> Request::Query(const std::string& name) const {
  auto [b, e] = query.equal_range(name);
  if (b == e) return std::nullopt;
  return std::prev(e)->second;
}

std::vector<std::string> Request::QueryAll(const std::string& name) const {
  std::vector<std::string> out;
  auto [b, e] = query.equal_range(name);
  for (auto it = b; it != e; ++it) out.push_back(it->second);
  return out;
}

std::string Request::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

Status ParseTarget(const std::string& target, Request* out) {
  size_t q = target.find('?');
  ASSIGN_OR_RETURN(out->path, Decode(std::string_view(target).substr(0, q), false));
  out->query.clear();
  if (q == std::string::npos) return OkStatus();
  std::string_view rest = std::string_view(target).substr(q + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    ASSIGN_OR_RETURN(std::string key, Decode(pair.substr(0, eq), true));
    std::string value;
    if (eq != std::string_view::npos) {
      ASSIGN_OR_RETURN(value, Decode(pair.substr(eq + 1), true));
    }
    out->query.emplace(std::move(key), std::move(value));
  }
  return OkStatus();
}

}  // namespace longhaul::http
