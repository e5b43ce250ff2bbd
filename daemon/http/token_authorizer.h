// The HTTP side of the client API's one check (daemon/auth): each request is mapped to the
// action of the ClientApi call it makes (GET: a read, POST .../pivot: PivotRun, ...) and handed
// to the same auth::ActionAuthorizer the gRPC service asks. The token comes from an
// "Authorization: Bearer" header or, for the browser (EventSource cannot send headers), from
// the HttpOnly cookie "longhaul_token".
#pragma once

#include "daemon/auth/authorizer.h"
#include "daemon/http/request_authorizer.h"

namespace longhaul::http {

// The action a request stands for. Requests outside /api/v1/ (the UI's files, /healthz) need
// none: nullopt.
std::optional<auth::Action> ActionOf(const Request& request);
// The token a request carries: the bearer header first, else the cookie; "" when none.
std::string RequestToken(const Request& request);

class TokenHttpAuthorizer final : public RequestAuthorizer {
 public:
  // `authorizer` is not owned and outlives this.
  explicit TokenHttpAuthorizer(const auth::ActionAuthorizer* authorizer)
      : authorizer_(authorizer) {}
  Result<auth::Principal> Authorize(const Request& request) const override;

 private:
  const auth::ActionAuthorizer* authorizer_;
};

}  // namespace longhaul::http
