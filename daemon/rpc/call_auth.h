// The gRPC side of the ActionAuthorizer: the bearer token from the call's "authorization" metadata
// and the peer address, handed to the one check. A refusal is logged here (who, from where,
// what), once, with no token in the line.
#pragma once

#include <grpcpp/server_context.h>

#include "core/status.h"
#include "daemon/auth/authorizer.h"

namespace longhaul::rpc {

Result<auth::Principal> CheckCall(const auth::ActionAuthorizer& authorizer,
                                  const grpc::ServerContext* ctx, auth::Action action);

}  // namespace longhaul::rpc
