// `cache: {key_on: [engine_version, executable]}`: a reuse candidate whose recorded engine
// version or executable differs from the newest recorded is run again (docs/caching.md,
// "key_on").
#include <optional>

#include "core/engine_arg.h"
#include "core/strings.h"
#include "daemon/scheduler/planner.h"
#include "daemon/workflow/template.h"

namespace longhaul::scheduler {
namespace {

// The stage's argv with its params substituted; references that are known only when it runs
// (upstream outputs, ${output_dir}, ${run.id}) are kept as written.
std::vector<std::string> VersionCheckArgv(const workflow::StageSpec& spec,
                                          const std::map<std::string, std::string>& params) {
  workflow::TemplateContext ctx;
  ctx.params = &params;
  ctx.keep_unbound = true;
  std::vector<std::string> argv;
  for (const std::string& arg : spec.run) {
    Result<std::string> expanded = workflow::ExpandTemplate(arg, ctx);
    argv.push_back(expanded.ok() ? *expanded : arg);
  }
  return argv;
}

// "what changed (before -> now)" when both are known and differ; nullopt otherwise. A value
// recorded now but not with the earlier stage counts as a change: the stage asked to be run
// again when its environment may differ, and nothing says it does not.
std::optional<std::string> VersionChange(std::string_view what, const std::string& before,
                                         const std::string& now, int64_t run_id) {
  if (now.empty() || before == now) return std::nullopt;
  if (before.empty()) {
    return StrCat(what, " of run ", run_id, " was not recorded (now ", now, ")");
  }
  return StrCat(what, " changed (", before, " -> ", now, ")");
}

std::string ShortSha(const std::string& sha) { return sha.substr(0, 12); }

}  // namespace

Status CheckRecordedVersions(store::SqliteStore* store, const workflow::Workflow& wf,
                             RunPlan* plan) {
  // Stages run again for their versions: what they produce may differ, so a reuse candidate
  // that needs one runs again too (its key, like theirs, is unchanged).
  std::map<std::string, std::string> rerun;  // stage -> why
  for (size_t i = 0; i < wf.stages.size(); ++i) {
    const workflow::StageSpec& spec = wf.stages[i];
    StagePlan& sp = plan->stages[i];
    if (!sp.hit) continue;
    std::vector<std::string> upstream;
    for (const auto& need : spec.needs) {
      if (rerun.count(need)) upstream.push_back(StrCat("upstream '", need, "' runs again"));
    }
    if (!upstream.empty()) {
      rerun[spec.name] = StrJoin(upstream, "; ");
      RerunStage(plan, i, rerun[spec.name]);
      continue;
    }
    if (spec.cache_key_on == 0) continue;
    ASSIGN_OR_RETURN(v1::AttemptEnvironment before, store->StageEnvironment(sp.hit->stage_id));
    std::vector<std::string> argv = VersionCheckArgv(spec, plan->params);
    std::vector<std::string> why;
    if (spec.cache_key_on & workflow::kKeyOnEngineVersion) {
      if (std::optional<std::string> profile = EngineProfileArg(argv)) {
        ASSIGN_OR_RETURN(std::string now, store->LatestEngineVersion(*profile));
        std::string was = before.engine_profile() == *profile ? before.engine_version() : "";
        if (auto change = VersionChange("engine version", was, now, sp.hit->run_id)) {
          why.push_back(*change);
        }
      }
    }
    if ((spec.cache_key_on & workflow::kKeyOnExecutable) && !argv.empty()) {
      ASSIGN_OR_RETURN(std::string now, store->LatestExecutableSha256(argv[0]));
      if (auto change =
              VersionChange(StrCat("executable ", argv[0]), ShortSha(before.executable_sha256()),
                            ShortSha(now), sp.hit->run_id)) {
        why.push_back(*change);
      }
    }
    if (!why.empty()) {
      rerun[spec.name] = StrJoin(why, "; ");
      RerunStage(plan, i, rerun[spec.name]);
    }
  }
  return OkStatus();
}

}  // namespace longhaul::scheduler
