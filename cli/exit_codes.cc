#include "cli/exit_codes.h"

namespace longhaul::cli {

int ExitCodeForStatus(const Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
      return kExitUsage;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnreachable;
    case absl::StatusCode::kUnauthenticated:
      return kExitUnauthenticated;
    case absl::StatusCode::kPermissionDenied:
      return kExitPermissionDenied;
    default:
      return kExitOther;
  }
}

int ExitCodeForRun(v1::RunStatus status) {
  switch (status) {
    case v1::RUN_SUCCEEDED:
      return kExitOk;
    case v1::RUN_FAILED:
      return kExitRunFailed;
    case v1::RUN_CANCELLED:
      return kExitCancelled;
    default:
      return kExitOther;
  }
}

}  // namespace longhaul::cli
