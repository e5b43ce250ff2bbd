// Rows to the v1 protos clients see. Used by the store's reads and by the scheduler's watch
// updates (built from its in-memory rows).
#pragma once

#include "daemon/store/rows.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::store {

// Fills the run's own fields (not stages).
void RunRowToProto(const RunRow& row, v1::Run* out);
// Fills the stage's own fields (not attempts, metrics, artifacts, cached_from_run_id).
void StageRowToProto(const StageRow& row, v1::Stage* out);
void AttemptRowToProto(const AttemptRow& row, v1::Attempt* out);

}  // namespace longhaul::store
