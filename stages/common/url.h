// Endpoint URLs as the stages take them on their command lines: "http://host:port[/base]".
// Only plain HTTP: the engines run on the cluster's private network and longhaul talks to
// them directly (https would need a TLS stack the stage binaries do not carry).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul::stages {

struct HttpUrl {
  std::string host;  // "127.0.0.1", "node5", "[::1]" unwrapped to "::1"
  uint16_t port = 80;
  std::string base;  // path prefix without a trailing '/', "" for the root ("/v1" kept)

  // "http://host:port" (no base): what an "endpoint" output carries.
  std::string Origin() const;
  // base + path, where `path` starts with '/'.
  std::string Target(std::string_view path) const { return base + std::string(path); }
};

// Parses "http://host[:port][/base]". InvalidArgument names the URL and what is wrong.
// A trailing "/v1" is kept as part of the base only when `keep_v1` is true; by default it is
// dropped, so "--endpoint http://h:8000/v1" and "http://h:8000" mean the same server.
Result<HttpUrl> ParseHttpUrl(std::string_view url, bool keep_v1 = false);

}  // namespace longhaul::stages
