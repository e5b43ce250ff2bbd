// longhaul::Status <-> grpc::Status. absl and gRPC share the canonical code numbers.
#pragma once

#include <grpcpp/support/status.h>

#include "core/status.h"
#include "core/strings.h"

namespace longhaul::rpc {

inline grpc::Status ToGrpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), ToStd(s.message()));
}

}  // namespace longhaul::rpc
