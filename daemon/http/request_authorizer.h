// The one place the HTTP router asks whether a request may proceed, and who sent it. Checking
// that a POST comes from a page of this server (Origin vs Host) is separate and always on
// (router.cc).
#pragma once

#include "core/status.h"
#include "daemon/auth/authorizer.h"
#include "daemon/http/message.h"

namespace longhaul::http {

class RequestAuthorizer {
 public:
  virtual ~RequestAuthorizer() = default;
  // The caller (name, role, address) when the request may proceed; Unauthenticated or
  // PermissionDenied (answered as 401/403) otherwise. A request that needs no check (the UI's
  // files, /healthz, login) gets an unnamed viewer with the request's peer. Thread-safe.
  virtual Result<auth::Principal> Authorize(const Request& request) const = 0;
};

// No tokens: everyone may do everything, named as auth::OpenAuthorizer names them ("local"
// on loopback, "anonymous" elsewhere), so the audit trail still says where a call came from.
class AllowAll final : public RequestAuthorizer {
 public:
  Result<auth::Principal> Authorize(const Request& request) const override {
    return open_.Authorize("", request.peer, auth::Action::kGetRun);
  }

 private:
  auth::OpenAuthorizer open_;
};

}  // namespace longhaul::http
