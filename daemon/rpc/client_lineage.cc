// ClientApi::GetLineage: where a stage's result came from and where it went, what `longhaul
// lineage` prints and the web UI's lineage view draws (docs/cli.md, "lineage"): the attempt
// that made it (in this run, or in the run it was reused from), the stages it needs and where
// their results came from, and the stages that used it: this run's, and later runs of the
// workflow that reused the same result, each with what it made from it.
#include "core/strings.h"
#include "daemon/rpc/client_api.h"
#include "daemon/workflow/cache_key.h"

namespace longhaul::rpc {
namespace {

// Later runs looked at for reuse of the result, newest first.
constexpr int kLineageLaterRuns = 500;

// Stages of `run_id` (only `names` when given), every page.
Result<std::vector<v1::Stage>> LineageStagesOf(store::SqliteStore* store, int64_t run_id,
                                               const std::vector<std::string>& names) {
  std::vector<v1::Stage> out;
  v1::ListStagesRequest req;
  req.set_run_id(run_id);
  for (const auto& n : names) req.add_names(n);
  for (;;) {
    ASSIGN_OR_RETURN(v1::ListStagesResponse page, store->ListStages(req));
    for (auto& s : *page.mutable_stages()) out.push_back(std::move(s));
    if (page.next_page_token().empty()) return out;
    req.set_page_token(page.next_page_token());
  }
}

// The stage a reused stage's result came from ("" stage: its own name).
std::string SourceStageOf(const v1::Stage& s) {
  return s.cached_from_stage().empty() ? s.name() : s.cached_from_stage();
}

Result<v1::LineageOrigin> LineageOriginOf(store::SqliteStore* store, int64_t run_id,
                                          const v1::Stage& s) {
  v1::LineageOrigin o;
  o.set_run_id(run_id);
  o.set_stage(s.name());
  o.set_attempt(s.attempt_count());
  o.set_how("fresh");
  if (s.status() != v1::STAGE_CACHED || s.cached_from_run_id() <= 0) return o;
  o.set_run_id(s.cached_from_run_id());
  o.set_stage(SourceStageOf(s));
  o.set_how("reused");
  ASSIGN_OR_RETURN(std::vector<v1::Stage> from, LineageStagesOf(store, o.run_id(), {o.stage()}));
  o.set_attempt(from.empty() ? 0 : from[0].attempt_count());
  return o;
}

// The stages of `stages` that need `name`, as uses of it by run `run_id`.
std::vector<v1::LineageUse> NeededBy(const std::vector<v1::Stage>& stages, int64_t run_id,
                                     const std::string& name) {
  std::vector<v1::LineageUse> out;
  for (const v1::Stage& s : stages) {
    for (const auto& n : s.needs()) {
      if (n != name) continue;
      v1::LineageUse u;
      u.set_run_id(run_id);
      u.set_stage(s.name());
      u.set_how("needs it");
      u.set_status(s.status());
      out.push_back(std::move(u));
    }
  }
  return out;
}

// The values stage `stage` of run `run_id` read through tags, as inputs from the tagged
// stages; and the later runs that read its own result through a tag, as uses.
Status AddTagLineage(store::SqliteStore* store, int64_t run_id, const std::string& stage,
                     v1::GetLineageResponse* resp) {
  ASSIGN_OR_RETURN(std::vector<store::SqliteStore::StageKey> keys, store->ReadStageKeys(run_id));
  int64_t stage_id = 0;
  for (const auto& k : keys) {
    if (k.name == stage) stage_id = k.id;
  }
  if (stage_id == 0) return OkStatus();
  ASSIGN_OR_RETURN(std::vector<std::optional<std::string>> jsons,
                   store->ReadFingerprintJsons({stage_id}));
  Result<workflow::StageFingerprint> fp =
      jsons[0] ? workflow::ParseFingerprintJson(*jsons[0]) : workflow::StageFingerprint();
  if (fp.ok() && !fp->tag_sources.empty()) {
    ASSIGN_OR_RETURN(std::vector<store::TagUseRow> uses, store->ReadTagUses(run_id));
    std::set<std::string> added;
    for (const store::TagUseRow& u : uses) {
      if (!fp->tag_sources.count(u.tag) || !added.insert(u.tag).second) continue;
      ASSIGN_OR_RETURN(std::vector<v1::Stage> from,
                       LineageStagesOf(store, u.from_run_id, {u.from_stage}));
      if (from.empty()) continue;
      v1::LineageInput* in = resp->add_inputs();
      in->set_needs(StrCat("tags.", u.tag));
      in->set_tag(u.tag);
      ASSIGN_OR_RETURN(*in->mutable_made_by(), LineageOriginOf(store, u.from_run_id, from[0]));
    }
  }
  ASSIGN_OR_RETURN(auto readers, store->ReadTagReaders(stage_id));
  for (const auto& [reader, tag] : readers) {
    v1::LineageUse* use = resp->add_used_by();
    use->set_run_id(reader);
    use->set_how(StrCat("through tag ", tag));
  }
  return OkStatus();
}

}  // namespace

Result<v1::GetLineageResponse> ClientApi::GetLineage(const v1::GetLineageRequest& req) {
  v1::GetRunRequest head;
  head.set_id(req.run_id());
  head.set_stage_limit(-1);
  ASSIGN_OR_RETURN(v1::Run run, store_->GetRun(head));
  ASSIGN_OR_RETURN(std::vector<v1::Stage> found,
                   LineageStagesOf(store_, req.run_id(), {req.stage()}));
  if (found.empty()) {
    return absl::NotFoundError(StrCat("run ", req.run_id(), " has no stage '", req.stage(), "'"));
  }
  const v1::Stage& stage = found[0];
  v1::GetLineageResponse resp;
  resp.set_run_id(req.run_id());
  resp.set_stage(stage.name());
  resp.set_status(stage.status());
  resp.set_workflow_name(run.workflow_name());
  ASSIGN_OR_RETURN(*resp.mutable_made_by(), LineageOriginOf(store_, req.run_id(), stage));

  std::vector<std::string> needs(stage.needs().begin(), stage.needs().end());
  if (!needs.empty()) {
    ASSIGN_OR_RETURN(std::vector<v1::Stage> up, LineageStagesOf(store_, req.run_id(), needs));
    for (const v1::Stage& u : up) {
      v1::LineageInput* in = resp.add_inputs();
      in->set_needs(u.name());
      ASSIGN_OR_RETURN(*in->mutable_made_by(), LineageOriginOf(store_, req.run_id(), u));
    }
  }

  RETURN_IF_ERROR(AddTagLineage(store_, req.run_id(), stage.name(), &resp));

  ASSIGN_OR_RETURN(std::vector<v1::Stage> all, LineageStagesOf(store_, req.run_id(), {}));
  for (v1::LineageUse& u : NeededBy(all, req.run_id(), stage.name())) {
    *resp.add_used_by() = std::move(u);
  }
  // Later runs of the workflow whose stage of the same name reused the same result, each with
  // the stages it made from it.
  v1::ListRunsRequest later;
  later.set_workflow(run.workflow_name());
  later.set_limit(kLineageLaterRuns);
  ASSIGN_OR_RETURN(v1::ListRunsResponse runs, store_->ListRuns(later));
  resp.set_runs_looked_at(kLineageLaterRuns);
  resp.set_more_runs(!runs.next_page_token().empty());
  const v1::LineageOrigin& origin = resp.made_by();
  for (auto it = runs.runs().rbegin(); it != runs.runs().rend(); ++it) {
    if (it->id() <= req.run_id()) continue;
    ASSIGN_OR_RETURN(std::vector<v1::Stage> same,
                     LineageStagesOf(store_, it->id(), {stage.name()}));
    if (same.empty()) continue;
    const v1::Stage& s = same[0];
    if (s.status() != v1::STAGE_CACHED || s.cached_from_run_id() != origin.run_id() ||
        SourceStageOf(s) != origin.stage()) {
      continue;
    }
    v1::LineageUse* u = resp.add_used_by();
    u->set_run_id(it->id());
    u->set_stage(s.name());
    u->set_how("reused this result");
    u->set_status(s.status());
    ASSIGN_OR_RETURN(std::vector<v1::Stage> theirs, LineageStagesOf(store_, it->id(), {}));
    for (const v1::LineageUse& made : NeededBy(theirs, it->id(), s.name())) {
      u->add_produced(made.stage());
    }
  }
  return resp;
}

}  // namespace longhaul::rpc
