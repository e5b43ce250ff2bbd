// lh-bench from flags to result: validate, build the workload, scrape the server's metrics,
// run the schedule, scrape again, write the result file and the stage events.
#pragma once

#include <nlohmann/json.hpp>

#include "core/event_writer.h"
#include "core/status.h"
#include "stages/bench/bench_options.h"

namespace longhaul::stages {

struct BenchOutcome {
  nlohmann::json result;
  // Failed requests exceeded --max-failed-fraction, or nothing succeeded.
  bool too_many_failures = false;
  bool interrupted = false;  // SIGINT/SIGTERM: partial result written
};

// Errors: bad options, unreadable prompts or baseline, result file not writable. Failed
// requests are not an error here; they are counted in the outcome.
Result<BenchOutcome> RunBench(const BenchOptions& options, EventWriter& events);

// A few lines for a person reading the log.
std::string FormatBenchSummary(const nlohmann::json& result);

}  // namespace longhaul::stages
