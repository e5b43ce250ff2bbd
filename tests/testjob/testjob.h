// lh-testjob's behaviour, as a library so that its test can check the pieces that are not
// obvious (resumable work, children, malformed lines) without a shell.
#pragma once

#include "tests/testjob/testjob_options.h"

namespace longhaul::testjob {

// Does what `opts` asks, in this order: pid file, children, stdout/stderr lines, the
// --fail-first check, outputs/metrics/artifacts, malformed lines, --events, --work,
// --progress/--sleep, --stall-after, --ready. Returns the process exit code. May fork.
int RunTestJob(const TestJobOptions& opts);

}  // namespace longhaul::testjob
