// What a submission will do with each stage: run it, or reuse an earlier run's result
// (docs/caching.md), and why. Planning reads only committed state, so it runs on
// the caller's thread; the artifact check in between asks agents (see rpc/client_service.cc).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "daemon/scheduler/tag_resolve.h"
#include "daemon/store/sqlite_store.h"
#include "daemon/workflow/cache_key.h"
#include "daemon/workflow/workflow.h"
#include "longhaul/v1/client.pb.h"

namespace longhaul::scheduler {

struct SubmitInput;

struct StagePlan {
  std::string stage;
  bool service = false;
  // "run", "reuse", "skip" (a service nothing needs), or "stop" (a sweep item a changed
  // early_stop rule stops from the values stored before: sweep_rejudge.h)
  std::string action = "run";
  std::string reason;
  workflow::StageFingerprint fingerprint;
  std::optional<store::CacheHit> hit;  // set when action is "reuse"
  // A sweep item judged again at submission: the stage whose stored values count as its own.
  std::optional<int64_t> judged_from;
};

struct RunPlan {
  std::map<std::string, std::string> params;  // every param's value
  std::vector<StagePlan> stages;              // the workflow's topological order
  std::optional<int64_t> reference_run;       // whose stages the reasons compare against
  TagResolution tags;                         // the workflow's ${tags.*} references, resolved
};

// Fingerprints every stage and finds reuse candidates; reasons compare with the parent run (a
// pivot) or else the newest earlier run of the same workflow. Artifacts are not checked here.
Result<RunPlan> PlanRun(store::SqliteStore* store, const SubmitInput& input);

// For each reuse candidate whose stage says `cache: {key_on: [...]}`: the engine version (of
// the profile its `lh-serve --profile` names) and the executable's SHA-256 that the earlier
// stage's last attempt recorded, against the newest recorded on any agent for that profile and
// executable; a known difference turns it into a run ("engine version changed (0.8.4 ->
// 0.9.0)"). docs/caching.md, "key_on".
Status CheckRecordedVersions(store::SqliteStore* store, const workflow::Workflow& wf,
                             RunPlan* plan);

// Turns a reuse candidate into a run (its artifacts are gone, say).
void RerunStage(RunPlan* plan, size_t index, std::string reason);

// Decides the services: one runs only when a stage that needs it runs. Call after every
// RerunStage.
void FinalizePlan(const workflow::Workflow& wf, RunPlan* plan);

// One stage's plan as the client API shows it (without what reusing saves).
v1::PlanEntry PlanEntryOf(const StagePlan& sp);

}  // namespace longhaul::scheduler
