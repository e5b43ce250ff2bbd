// Routes one HTTP request: /api/v1/... to the JSON API (api.h), everything else to the UI's
// files. Every request passes the RequestAuthorizer first; a POST whose Origin names another host
// than its Host header is refused (403), so a page of another site cannot drive longhauld
// through the user's browser. The watch stream (SSE) is not answered here: the server hands
// it to the SseHub after Admit().
#pragma once

#include <cstdint>
#include <optional>

#include "daemon/http/message.h"
#include "daemon/http/request_authorizer.h"
#include "daemon/http/static_files.h"
#include "daemon/rpc/client_api.h"

namespace longhaul::http {

class Router {
 public:
  Router(rpc::ClientApi* api, const RequestAuthorizer* authorizer, const StaticFiles* files)
      : api_(api), authorizer_(authorizer), files_(files) {}

  // The refusal for a request that may not proceed (authorizer, Origin), or nullopt after
  // setting `request->principal` to its sender. Cheap: call it on the I/O thread.
  std::optional<Response> Admit(Request& request) const;
  // GET /api/v1/runs/{id}/watch: the run id; nullopt for any other request. InvalidArgument
  // for a watch path with a bad id.
  static std::optional<Result<int64_t>> WatchTarget(const Request& request);
  // Answers any request but a watch, once Admit() let it in (mutations are recorded in the
  // audit trail under its principal). May block on the store or the scheduler loop: call it
  // on a worker thread.
  Response Handle(const Request& request) const;

 private:
  Response Login(const Request& request) const;

  rpc::ClientApi* api_;
  const RequestAuthorizer* authorizer_;
  const StaticFiles* files_;
};

}  // namespace longhaul::http
