// One HTTPS POST for a webhook (Boost.Beast over OpenSSL): the server's certificate must chain
// to the system's CA store, or to `ca_file` when one is given, and name the URL's host; the
// host name is sent as SNI (not for an IP address). One request per connection, the whole call
// bounded by `timeout_ms`. Thread-safe: each call has its own io_context and TLS context.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul::notify {

struct HttpsUrl {
  std::string host;  // "hooks.example.com", "127.0.0.1", "::1" (brackets removed)
  uint16_t port = 443;
  std::string target = "/";  // path and query
};

// Parses "https://host[:port][/path[?query]]". InvalidArgument names the URL and the problem.
Result<HttpsUrl> ParseHttpsUrl(std::string_view url);

struct HttpsAnswer {
  int status = 0;
  std::string body;
};

// POSTs `body` (application/json) to `url`. Unavailable when the server cannot be reached or
// its certificate is not trusted (the message says which: "certificate verify failed ...");
// DeadlineExceeded past `timeout_ms`. Any HTTP status is an answer, not an error.
Result<HttpsAnswer> HttpsPost(const std::string& url, const std::string& body,
                              const std::string& ca_file, int64_t timeout_ms);

}  // namespace longhaul::notify
