// Status and Result for every longhaul library: absl's, linked through gRPC already.
//
// Errors carry what happened and where ("workflow.yaml:3:5: unknown key 'neds'"); each layer
// that adds context does so with Annotate(). Exceptions from third-party libraries are caught
// at the adapter that calls them and turned into a Status there.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace longhaul {

using Status = absl::Status;
template <typename T>
using Result = absl::StatusOr<T>;

inline Status OkStatus() { return absl::OkStatus(); }

// Returns `s` with "context: " put in front of its message; OK stays OK.
Status Annotate(const Status& s, std::string_view context);

}  // namespace longhaul

#define LH_CONCAT_INNER(a, b) a##b
#define LH_CONCAT(a, b) LH_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                         \
  do {                                                \
    ::longhaul::Status lh_status_ = (expr);           \
    if (!lh_status_.ok()) return lh_status_;          \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(LH_CONCAT(lh_result_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                          \
  if (!result.ok()) return result.status();      \
  lhs = std::move(result).value()
