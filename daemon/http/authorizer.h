// The one place the HTTP router asks whether a request may proceed. Nothing is configured
// yet, so the default allows everything; tokens plug in here. Checking that a POST comes from
// a page of this server (Origin vs Host) is separate and always on (router.cc).
#pragma once

#include "core/status.h"
#include "daemon/http/message.h"

namespace longhaul::http {

class Authorizer {
 public:
  virtual ~Authorizer() = default;
  // OK to proceed; PermissionDenied or Unauthenticated (answered as 403/401) otherwise.
  virtual Status Authorize(const Request& request) const = 0;
};

class AllowAll final : public Authorizer {
 public:
  Status Authorize(const Request&) const override { return OkStatus(); }
};

}  // namespace longhaul::http
