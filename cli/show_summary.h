// `longhaul show` of a big run: the summary it prints instead of every stage, and the paging
// that `show --all` (and `show RUN STAGE`) use to reach any stage.
#pragma once

#include <ostream>

#include "cli/cli_env.h"
#include "cli/coordinator.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::cli {

// The stage table of `show` (STAGE, KIND, STATUS, ATTEMPT, AGENT, PROGRESS, ELAPSED, REASON).
void RenderStageTable(std::ostream& out, const google::protobuf::RepeatedPtrField<v1::Stage>& stages,
                      int64_t now_ms);

// Appends to run->stages every page that follows run->next_stage_page_token (then cleared).
Status FetchRemainingStages(Coordinator& coordinator, v1::Run* run, bool include_attempts);

// Looks the stage `name` of `run` up: in run.stages, else (a run shown in part) through
// ListStages. NotFound when the run has no such stage.
Result<v1::Stage> FindStage(Coordinator& coordinator, const v1::Run& run, const std::string& name,
                            bool include_attempts);

// After the run's header: its stages per state, then those running, failed and most recently
// changed (at most kSummaryStages each), and how to see every stage.
Status PrintRunSummary(CommandContext& ctx, const v1::Run& run);

}  // namespace longhaul::cli
