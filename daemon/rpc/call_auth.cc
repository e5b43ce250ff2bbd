#include "daemon/rpc/call_auth.h"

#include <string>

#include "core/logging.h"
#include "core/strings.h"

namespace longhaul::rpc {

Result<auth::Principal> CheckCall(const auth::ActionAuthorizer& authorizer,
                                  const grpc::ServerContext* ctx, auth::Action action) {
  std::string header;
  const auto& md = ctx->client_metadata();
  if (auto it = md.find("authorization"); it != md.end()) {
    header.assign(it->second.data(), it->second.size());
  }
  std::string peer = ctx->peer();
  Result<auth::Principal> p = authorizer.Authorize(auth::BearerToken(header), peer, action);
  if (!p.ok()) {
    GetLogger("rpc")->warn("refused {} from {}: {}", auth::ActionMethod(action), peer,
                           ToStd(p.status().message()));
  }
  return p;
}

}  // namespace longhaul::rpc
