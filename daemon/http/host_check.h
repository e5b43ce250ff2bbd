// The Host header check of longhauld's HTTP listener, against DNS rebinding: a page on another
// site whose name an attacker points at this machine reaches the listener with that site's
// name in Host, so only the names this server is known by are answered.
//
// Allowed: localhost, 127.0.0.1 and [::1] with the bound port; the --http listen host with the
// bound port (unless it is 0.0.0.0 or ::); every --http-host NAME (any port) or NAME:PORT. A
// port is optional in Host when the bound port is the scheme's default. Names compare
// case-insensitively. Immutable after Create: safe to share between threads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "daemon/http/message.h"

namespace longhaul::http {

class HostCheck {
 public:
  // `listen` is the --http value, `bound_port` the port it got, `extra` the --http-host values
  // ("NAME" or "NAME:PORT", NAME an IPv6 literal in brackets). InvalidArgument naming the
  // --http-host value that is not a host name.
  static Result<HostCheck> Create(const std::string& listen, int bound_port, bool tls,
                                  const std::vector<std::string>& extra);

  // nullopt when `host` (the Host header's value) names this server; otherwise the response:
  // 421 with a JSON error naming the Host and the flag that would allow it. `http11`: the
  // request is HTTP/1.1, where a missing Host is a 400.
  std::optional<Response> Check(const std::string& host, bool http11, bool present) const;

  // Whether `host` ("NAME" or "NAME:PORT") is allowed.
  bool Allowed(const std::string& host) const;

 private:
  struct Name {
    std::string host;  // lower case; IPv6 in brackets
    int port = -1;     // -1: any
  };
  std::vector<Name> names_;
  int default_port_ = 80;
};

}  // namespace longhaul::http
