#include "core/net/url.h"

#include <charconv>

#include "core/strings.h"

namespace longhaul::net {

std::string HttpUrl::Origin() const {
  bool v6 = host.find(':') != std::string::npos;
  return StrCat(https ? "https://" : "http://", v6 ? "[" : "", host, v6 ? "]" : "", ":",
                static_cast<int>(port));
}

Result<HttpUrl> ParseHttpUrl(std::string_view url, const UrlRules& rules) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        StrCat(rules.what, rules.what.empty() ? "'" : " '", url, "': ", why));
  };
  std::string_view rest = StripWhitespace(url);
  HttpUrl out;
  if (StartsWith(rest, "https://")) {
    if (!rules.allow_https) return bad("https is not supported; use http://");
    out.https = true;
    out.port = 443;
    rest.remove_prefix(8);
  } else if (StartsWith(rest, "http://")) {
    rest.remove_prefix(7);
  } else {
    return bad(rules.allow_https ? "expected http://HOST[:PORT] or https://HOST[:PORT]"
                                 : "expected http://HOST:PORT");
  }
  for (char c : rest) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return bad("a space or control character in the URL");
    }
  }
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view path = end == std::string_view::npos ? "" : rest.substr(end);
  if (authority.find('@') != std::string_view::npos) return bad("user info is not supported");

  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed '[' in the host");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("expected ':PORT' after ']'");
      port_text = after.substr(1);
      has_port = true;
    }
    if (out.host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos) {
      return bad(StrCat("'", out.host, "' is not an IPv6 address"));
    }
  } else {
    size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      has_port = true;
    }
    if (out.host.find(':') != std::string::npos) {
      return bad("an IPv6 address must be in brackets: [::1]:PORT");
    }
  }
  if (out.host.empty()) return bad("missing host");
  if (has_port) {
    int port = 0;
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec != std::errc() || p != port_text.data() + port_text.size() ||
        port <= 0 || port > 65535) {
      return bad(StrCat("port '", port_text, "' is not a number from 1 to 65535"));
    }
    out.port = static_cast<uint16_t>(port);
  }
  if (path.find('#') != std::string_view::npos) return bad("fragments are not supported");
  if (!rules.allow_query && path.find('?') != std::string_view::npos) {
    return bad("query strings are not supported");
  }
  out.path = std::string(path);
  if (!out.path.empty() && out.path.front() == '?') out.path.insert(0, "/");
  return out;
}

}  // namespace longhaul::net
