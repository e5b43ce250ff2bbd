// Tags (tag_resolve.h): set, moved and removed on the loop, the store's one writer.
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/scheduler/tag_resolve.h"
#include "daemon/workflow/yaml_reader.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {
namespace {

std::string TagTargetText(const store::TagRow& t) { return StrCat("run ", t.run_id, " ", t.stage); }

}  // namespace

Result<v1::Tag> Scheduler::SetTag(const std::string& name, int64_t run_id, const std::string& stage,
                                  bool force, const std::string& by) {
  RETURN_IF_ERROR(CheckTagName(name));
  // The stage as the loop sees it: in memory while its run goes on, else as stored.
  std::optional<store::StageRow> row;
  std::vector<std::string> names;
  if (RunState* run = runs_.Find(run_id)) {
    if (StageState* s = run->Find(stage)) row = s->row;
    for (const auto& s : run->stages) names.push_back(s->row.name);
  } else {
    RETURN_IF_ERROR(store_->LoadRun(run_id).status());
    ASSIGN_OR_RETURN(std::vector<store::StageRow> stages, store_->LoadStages(run_id));
    for (store::StageRow& s : stages) {
      names.push_back(s.name);
      if (s.name == stage) row = std::move(s);
    }
  }
  if (!row) {
    return absl::NotFoundError(
        StrCat("run ", run_id, " has no stage '", stage, "'", workflow::DidYouMean(stage, names)));
  }
  if (row->status != v1::STAGE_SUCCEEDED && row->status != v1::STAGE_CACHED) {
    return absl::FailedPreconditionError(
        StrCat("stage '", stage, "' of run ", run_id, " is ", StageStatusName(row->status),
               ": only a succeeded (or cached) stage's result can be tagged"));
  }
  store::TagRow tag{name, run_id, stage, row->id, std::nullopt, by, clock_->NowMs()};
  if (row->status == v1::STAGE_SUCCEEDED) {
    Result<store::AttemptRow> attempt = store_->FindAttempt(run_id, stage, 0);
    if (attempt.ok()) tag.attempt_id = attempt->id;
  }
  ASSIGN_OR_RETURN(std::optional<store::TagRow> before, store_->LoadTag(name));
  std::string previous;
  if (before) {
    if (before->stage_id == tag.stage_id) return TagRowToProto(*before);  // already there
    if (!force) {
      return absl::FailedPreconditionError(
          StrCat("tag '", name, "' is on ", TagTargetText(*before), " (set by ",
                 before->set_by.empty() ? "-" : before->set_by, "); pass --force to move it"));
    }
    previous = TagTargetText(*before);
  }
  RETURN_IF_ERROR(store_->PutTag(tag));
  v1::Tag out = TagRowToProto(tag);
  out.set_previous(previous);
  return out;
}

Result<v1::Tag> Scheduler::RemoveTag(const std::string& name) {
  ASSIGN_OR_RETURN(std::optional<store::TagRow> before, store_->LoadTag(name));
  if (!before) return absl::NotFoundError(StrCat("no tag '", name, "'"));
  RETURN_IF_ERROR(store_->DeleteTag(name).status());
  v1::Tag out = TagRowToProto(*before);
  out.set_previous(TagTargetText(*before));
  return out;
}

}  // namespace longhaul::scheduler
