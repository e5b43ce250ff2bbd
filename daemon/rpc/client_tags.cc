// ClientApi's tags (docs/workflow-format.md, "Tags"): set, moved and removed on the scheduler
// loop; listed, and shown with a run, from the store.
#include "core/strings.h"
#include "daemon/rpc/client_api.h"
#include "daemon/scheduler/tag_resolve.h"

namespace longhaul::rpc {

v1::TagUse TagUseRowToProto(const store::TagUseRow& u) {
  v1::TagUse out;
  out.set_tag(u.tag);
  out.set_key(u.key);
  out.set_value(u.value);
  out.set_run_id(u.from_run_id);
  out.set_stage(u.from_stage);
  return out;
}

Result<v1::Tag> ClientApi::SetTag(const v1::SetTagRequest& req) {
  return loop_->Call<v1::Tag>([this, req] {
    return scheduler_->SetTag(req.name(), req.run_id(), req.stage(), req.force(), req.by());
  });
}

Result<v1::Tag> ClientApi::RemoveTag(const v1::RemoveTagRequest& req) {
  std::string name = req.name();
  return loop_->Call<v1::Tag>([this, name] { return scheduler_->RemoveTag(name); });
}

Result<v1::ListTagsResponse> ClientApi::ListTags(const v1::ListTagsRequest& req) {
  ASSIGN_OR_RETURN(std::vector<store::TagRow> rows, store_->ListTags(req.run_id()));
  v1::ListTagsResponse out;
  for (const store::TagRow& t : rows) *out.add_tags() = scheduler::TagRowToProto(t);
  return out;
}

Status ClientApi::AddRunTags(v1::Run* run) {
  ASSIGN_OR_RETURN(std::vector<store::TagRow> tags, store_->ListTags(run->id()));
  for (const store::TagRow& t : tags) *run->add_tags() = scheduler::TagRowToProto(t);
  ASSIGN_OR_RETURN(std::vector<store::TagUseRow> uses, store_->ReadTagUses(run->id()));
  for (const store::TagUseRow& u : uses) *run->add_tag_uses() = TagUseRowToProto(u);
  return OkStatus();
}

Status ClientApi::AddListedRunTags(v1::ListRunsResponse* resp) {
  if (resp->runs().empty()) return OkStatus();
  // Every tag, once: there are few, and a page of runs is many.
  ASSIGN_OR_RETURN(std::vector<store::TagRow> tags, store_->ListTags(0));
  std::map<int64_t, std::vector<const store::TagRow*>> by_run;
  for (const store::TagRow& t : tags) by_run[t.run_id].push_back(&t);
  for (v1::Run& run : *resp->mutable_runs()) {
    auto it = by_run.find(run.id());
    if (it == by_run.end()) continue;
    for (const store::TagRow* t : it->second) *run.add_tags() = scheduler::TagRowToProto(*t);
  }
  return OkStatus();
}

}  // namespace longhaul::rpc
