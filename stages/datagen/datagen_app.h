// lh-datagen from flags to output: read the prompts, resume from OUT, generate what is left,
// report events (progress, metrics, the `samples` output and artifact).
#pragma once

#include "core/event_writer.h"
#include "core/status.h"
#include "stages/datagen/datagen_options.h"
#include "stages/datagen/datagen_runner.h"

namespace longhaul::stages {

struct DatagenOutcome {
  int64_t total = 0;    // samples asked for (capped at what the prompts file holds)
  int64_t resumed = 0;  // already in OUT when this attempt started
  DatagenStats stats;   // this attempt
  bool too_many_failures = false;
  bool interrupted = false;
};

// Errors: bad options or prompts, output not writable, or fail-fast (see DatagenRunner).
Result<DatagenOutcome> RunDatagen(DatagenOptions options, EventWriter& events);

}  // namespace longhaul::stages
