#include "cli/show_summary.h"

#include <algorithm>

#include "cli/format.h"
#include "cli/run_view.h"
#include "cli/table.h"
#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::cli {

void RenderStageTable(std::ostream& out, const google::protobuf::RepeatedPtrField<v1::Stage>& stages,
                      int64_t now_ms) {
  Table table({"STAGE", "KIND", "STATUS", "ATTEMPT", "AGENT", "PROGRESS", "ELAPSED", "REASON"});
  table.AlignRight(3);
  table.AlignRight(6);
  for (const v1::Stage& s : stages) {
    int64_t elapsed = StageElapsedMs(s, now_ms);
    std::string progress = StageProgress(s);
    table.AddRow({s.name(), s.kind().empty() ? "task" : s.kind(),
                  std::string(StageStatusLabel(s.status())), AttemptText(s),
                  s.agent_id().empty() ? "-" : s.agent_id(), progress.empty() ? "-" : progress,
                  elapsed >= 0 ? FormatDuration(elapsed) : "-", StageReason(s, now_ms)});
  }
  table.Render(out);
}

Status FetchRemainingStages(Coordinator& coordinator, v1::Run* run, bool include_attempts) {
  v1::ListStagesRequest req;
  req.set_run_id(run->id());
  req.set_include_attempts(include_attempts);
  std::string token = run->next_stage_page_token();
  while (!token.empty()) {
    req.set_page_token(token);
    ASSIGN_OR_RETURN(v1::ListStagesResponse page, coordinator.ListStages(req));
    for (v1::Stage& s : *page.mutable_stages()) run->mutable_stages()->Add(std::move(s));
    token = page.next_page_token();
  }
  run->clear_next_stage_page_token();
  return OkStatus();
}

Result<v1::Stage> FindStage(Coordinator& coordinator, const v1::Run& run, const std::string& name,
                            bool include_attempts) {
  for (const v1::Stage& s : run.stages()) {
    if (s.name() == name) return s;
  }
  if (!run.next_stage_page_token().empty()) {
    v1::ListStagesRequest req;
    req.set_run_id(run.id());
    req.add_names(name);
    req.set_include_attempts(include_attempts);
    ASSIGN_OR_RETURN(v1::ListStagesResponse found, coordinator.ListStages(req));
    if (found.stages_size() == 1) return found.stages(0);
    int total = 0;
    for (const auto& [state, n] : run.stage_counts()) total += n;
    return absl::NotFoundError(StrCat("run ", run.id(), " has no stage '", name, "' (it has ",
                                      total, " stages: `longhaul show ", run.id(),
                                      " --all` lists them)"));
  }
  std::vector<std::string> names;
  for (const v1::Stage& s : run.stages()) names.push_back(s.name());
  return absl::NotFoundError(StrCat("run ", run.id(), " has no stage '", name,
                                    "' (its stages: ", StrJoin(names, ", "), ")"));
}

namespace {

// One titled, bounded list of stages: "running (20 of 140):".
Status PrintSome(CommandContext& ctx, const v1::Run& run, const char* title,
                 std::vector<v1::StageStatus> statuses, bool recent, int in_states) {
  v1::ListStagesRequest req;
  req.set_run_id(run.id());
  req.set_page_size(kSummaryStages);
  for (v1::StageStatus s : statuses) req.add_statuses(s);
  req.set_recent_first(recent);
  ASSIGN_OR_RETURN(v1::ListStagesResponse page, ctx.coordinator->ListStages(req));
  if (recent) {
    // Stages that never started have not changed since the run began.
    auto* stages = page.mutable_stages();
    stages->erase(std::remove_if(stages->begin(), stages->end(),
                                 [](const v1::Stage& s) {
                                   return s.started_at_ms() <= 0 && s.ended_at_ms() <= 0;
                                 }),
                  stages->end());
  }
  if (page.stages_size() == 0) return OkStatus();
  ctx.out() << '\n' << title;
  if (in_states > page.stages_size()) ctx.out() << " (" << page.stages_size() << " of " << in_states << ")";
  ctx.out() << ":\n";
  RenderStageTable(ctx.out(), page.stages(), ctx.NowMs());
  return OkStatus();
}

}  // namespace

Status PrintRunSummary(CommandContext& ctx, const v1::Run& run) {
  std::map<std::string, int> counts = StageCounts(run);
  int total = 0;
  for (const auto& [state, n] : counts) total += n;
  Table table({"STATE", "STAGES"});
  table.AlignRight(1);
  for (const auto& [state, n] : counts) table.AddRow({state, std::to_string(n)});
  ctx.out() << '\n';
  table.Render(ctx.out());
  auto count = [&](std::initializer_list<const char*> names) {
    int n = 0;
    for (const char* name : names) {
      auto it = counts.find(name);
      if (it != counts.end()) n += it->second;
    }
    return n;
  };
  RETURN_IF_ERROR(PrintSome(ctx, run, "running",
                            {v1::STAGE_RUNNING, v1::STAGE_STARTING, v1::STAGE_SERVING}, false,
                            count({"running", "starting", "serving"})));
  RETURN_IF_ERROR(PrintSome(ctx, run, "failed", {v1::STAGE_FAILED}, false, count({"failed"})));
  RETURN_IF_ERROR(PrintSome(ctx, run, "recently changed", {}, true, 0));
  ctx.out() << "\n(" << total << " stages, more than " << kSmallRunStages
            << ": a summary; `longhaul show " << run.id() << " --all` lists every stage)\n";
  return OkStatus();
}

}  // namespace longhaul::cli
