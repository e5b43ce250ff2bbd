// The JSON API under /api/v1/ (docs/http-api.md lists every endpoint). Each handler parses
// the query or body into the longhaul.v1 request message, calls ClientApi, and prints the
// answer; no rule lives here. Mutations are recorded in the audit trail under
// `request.principal` (set by Router::Admit), as the gRPC service records its own.
#pragma once

#include <string>
#include <vector>

#include "daemon/http/message.h"
#include "daemon/rpc/client_api.h"

namespace longhaul::http {

// `segments`: the path after "/api/v1/" split at '/', e.g. {"runs", "12", "events"}.
Response HandleApi(rpc::ClientApi* api, const Request& request,
                   const std::vector<std::string>& segments);

}  // namespace longhaul::http
