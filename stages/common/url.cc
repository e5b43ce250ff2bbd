#include "stages/common/url.h"

#include <charconv>

#include "core/strings.h"

namespace longhaul::stages {

std::string HttpUrl::Origin() const {
  bool v6 = host.find(':') != std::string::npos;
  return StrCat("http://", v6 ? "[" : "", host, v6 ? "]" : "", ":", static_cast<int>(port));
}

Result<HttpUrl> ParseHttpUrl(std::string_view url, bool keep_v1) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("endpoint '", url, "': ", why));
  };
  std::string_view rest = StripWhitespace(url);
  if (StartsWith(rest, "https://")) return bad("https is not supported; use http://");
  if (!StartsWith(rest, "http://")) return bad("expected http://HOST:PORT");
  rest.remove_prefix(7);
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (authority.empty()) return bad("missing host");
  if (authority.find('@') != std::string_view::npos) return bad("user info is not supported");

  HttpUrl out;
  std::string_view port_text;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unterminated '[' in host");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("expected ':' after ']'");
      port_text = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (out.host.empty()) return bad("missing host");
  if (!port_text.empty()) {
    int port = 0;
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || p != port_text.data() + port_text.size() || port <= 0 ||
        port > 65535) {
      return bad(StrCat("bad port '", port_text, "'"));
    }
    out.port = static_cast<uint16_t>(port);
  }
  size_t q = path.find_first_of("?#");
  if (q != std::string_view::npos) return bad("query strings and fragments are not supported");
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (!keep_v1 && EndsWith(path, "/v1")) path.remove_suffix(3);
  out.base = std::string(path);
  return out;
}

}  // namespace longhaul::stages
