// The CLI's exit codes (docs/architecture.md, "Exit codes of the CLI") and how errors and
// run results map onto them.
#pragma once

#include "core/status.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitRunFailed = 1,
  kExitUsage = 2,  // bad usage or invalid input
  kExitNotFound = 3,
  kExitUnreachable = 4,  // the coordinator cannot be reached
  kExitCancelled = 5,
  kExitUnauthenticated = 6,  // no token, or one the coordinator does not know
  kExitPermissionDenied = 7,  // the token's role may not do this
  kExitOther = 10,
};

// NOT_FOUND -> 3; INVALID_ARGUMENT, FAILED_PRECONDITION -> 2; UNAVAILABLE,
// DEADLINE_EXCEEDED -> 4; UNAUTHENTICATED -> 6; PERMISSION_DENIED -> 7; OK -> 0; anything
// else -> 10.
int ExitCodeForStatus(const Status& status);

// succeeded -> 0, failed -> 1, cancelled -> 5; a run that has not ended -> 10.
int ExitCodeForRun(v1::RunStatus status);

}  // namespace longhaul::cli
