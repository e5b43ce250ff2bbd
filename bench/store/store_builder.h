// A big coordinator store for benchmarks, written through SqliteStore's own insert calls (no
// scheduler, no agents): many finished runs of a few workflows, one attempt per stage, each
// with its share of the events, in large transactions.
//
// The shape (deterministic: the same flags give the same store):
//  - `workflows` workflows "wf0".."wfN-1"; workflow w has 1 + w % 10 stages s0..s{n-1} in a
//    chain, so run r (of workflow r % workflows) has 10 stages when (r % workflows) % 10 == 9.
//  - run status by (r / workflows) % 20: 0 and 1 failed (its last stage failed), 2 cancelled
//    (its last stage cancelled), else succeeded. Run ids are 1..runs in creation order.
//  - every stage has one ended attempt with a start blob of ~300 bytes and one "loss" metric;
//    `events` event lines (progress, metric, message) are spread evenly over the attempts.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace longhaul::bench {

struct StoreShape {
  int64_t runs = 100'000;
  int64_t events = 10'000'000;
  int workflows = 20;
  int runs_per_transaction = 1'000;
};

struct BuiltStore {
  int64_t runs = 0;
  int64_t stages = 0;
  int64_t events = 0;
  double seconds = 0;  // wall time of the build
};

// The number of stages of run `run_id` (1-based) in a store of this shape.
int StagesOfRun(const StoreShape& shape, int64_t run_id);

// Creates the database at `path` (which must not exist) and fills it. `progress` is called
// after each transaction with the runs written so far (may be empty).
Result<BuiltStore> BuildStore(const std::string& path, const StoreShape& shape,
                              void (*progress)(int64_t runs_done, int64_t runs) = nullptr);

}  // namespace longhaul::bench
