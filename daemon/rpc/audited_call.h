// The one path every transport's mutations take (the gRPC service and the HTTP API): the call,
// then the call and its outcome into the audit trail under the caller that the transport's
// check answered. The caller must have been authorized for `action` already.
#pragma once

#include "core/status.h"
#include "daemon/auth/action.h"
#include "daemon/auth/authorizer.h"
#include "daemon/rpc/client_api.h"
#include "daemon/rpc/client_audit.h"

namespace longhaul::rpc {

// `call` is the ClientApi method for `action`, e.g. &ClientApi::SubmitRun. Returns its result.
template <typename Req, typename Resp>
Result<Resp> AuditedCall(ClientApi* api, const auth::Principal& who, auth::Action action,
                         const Req& req, Result<Resp> (ClientApi::*call)(const Req&)) {
  Result<Resp> out = (api->*call)(req);
  api->Audit(who, action, DescribeForAudit(req, out.ok() ? *out : Resp()), out.status());
  return out;
}

}  // namespace longhaul::rpc
