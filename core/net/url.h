// http:// and https:// URLs, the one parser for every HTTP client in the tree: the stages'
// endpoints (stages/common/openai.h, ParseEndpoint) and longhauld's webhooks
// (daemon/notify/sink.h). "scheme://host[:port][/path[?query]]"; the host a name, an IPv4
// address or a bracketed IPv6 literal ("[::1]"). No user info ("user:pass@host": a secret on a
// command line or in a workflow file is refused, not sent) and no fragment.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul::net {

struct HttpUrl {
  bool https = false;
  std::string host;    // "127.0.0.1", "node5", "[::1]" unwrapped to "::1"
  uint16_t port = 80;  // 80 for http, 443 for https unless given
  // The path and query as given ("/hooks/a?x=1"), or "" for none. A stage endpoint keeps here
  // the base path its API paths go under, without a trailing '/' (ParseEndpoint).
  std::string path;

  // "http://host:port" (no path): what an "endpoint" output carries; IPv6 bracketed.
  std::string Origin() const;
  // path + `rest`, where `rest` starts with '/'.
  std::string Target(std::string_view rest) const { return path + std::string(rest); }
  // The request target of the URL itself: its path and query, "/" when it has none.
  std::string RequestTarget() const { return path.empty() ? "/" : path; }
};

struct UrlRules {
  // Names the URL in errors: "endpoint 'http://x:0': ..."; "" for "'http://x:0': ...".
  std::string_view what = "URL";
  bool allow_https = true;
  bool allow_query = true;
};

// Parses `url` (surrounding whitespace ignored). InvalidArgument "WHAT 'URL': PROBLEM", the
// problem one of: the scheme, no host, an unclosed '[', a port that is not 1..65535, user info,
// a query or fragment where not allowed, a space or control character.
Result<HttpUrl> ParseHttpUrl(std::string_view url, const UrlRules& rules = {});

}  // namespace longhaul::net
