#include "daemon/store/proto_convert.h"

#include "longhaul/v1/agent.pb.h"

namespace longhaul::store {

void RunRowToProto(const RunRow& r, v1::Run* out) {
  out->set_id(r.id);
  out->set_workflow_name(r.workflow_name);
  out->set_workflow_path(r.workflow_path);
  out->set_status(r.status);
  for (const auto& [k, v] : r.params) (*out->mutable_params())[k] = v;
  out->set_parent_run_id(r.parent_run_id.value_or(0));
  out->set_created_at_ms(r.created_at_ms);
  out->set_started_at_ms(r.started_at_ms.value_or(0));
  out->set_ended_at_ms(r.ended_at_ms.value_or(0));
  out->set_reason(r.reason);
  out->set_no_cache(r.no_cache);
  out->set_description(r.description);
  out->set_collected_at_ms(r.collected_at_ms.value_or(0));
  out->set_user(r.user);
  out->set_team(r.team);
  out->set_priority(r.priority);
  out->set_budget_hold(r.budget_hold);
  if (r.budget_gpu_hours) {
    v1::RunBudget* b = out->mutable_budget();
    b->set_gpu_hours(*r.budget_gpu_hours);
    b->set_hard(r.budget_hard);
    b->set_raised_by(r.budget_raised_by);
  } else {
    out->clear_budget();
  }
}

void StageRowToProto(const StageRow& s, v1::Stage* out) {
  out->set_name(s.name);
  out->set_kind(s.kind);
  out->set_status(s.status);
  out->clear_needs();
  for (const auto& n : s.needs) out->add_needs(n);
  out->set_reason(s.reason.str());
  out->set_attempt_count(s.attempt_count);
  out->set_started_at_ms(s.started_at_ms.value_or(0));
  out->set_ended_at_ms(s.ended_at_ms.value_or(0));
  if (s.progress) {
    v1::Progress* p = out->mutable_progress();
    p->set_done(s.progress->done);
    p->set_total(s.progress->total);
    p->set_unit(s.progress->unit);
    p->set_rate(s.progress->rate);
    p->set_eta_seconds(s.progress->eta_seconds);
    p->set_updated_at_ms(s.progress->updated_at_ms);
  } else {
    out->clear_progress();
  }
  out->set_last_message(s.last_message.str());
  out->set_last_message_level(s.last_message_level.str());
  out->mutable_outputs()->clear();
  for (const auto& [k, v] : s.outputs) (*out->mutable_outputs())[k] = v;
  out->set_cache_key(s.cache_key.str());
  out->set_next_retry_at_ms(s.next_retry_at_ms.value_or(0));
  *out->mutable_resources() = s.resources;
  out->set_agent_id(s.agent_id.str());
  out->set_malformed_events(s.malformed);
  out->set_last_malformed(s.last_malformed.str());
  out->set_plan_action(s.plan_action);
  out->set_plan_reason(s.plan_reason.str());
  out->set_description(s.description.str());
  out->set_fingerprint(s.fingerprint_json == "{}" ? "" : s.fingerprint_json.str());
}

void AttemptRowToProto(const AttemptRow& a, v1::Attempt* out) {
  out->set_id(a.id);
  out->set_number(a.number);
  out->set_agent_id(a.agent_id);
  out->set_state(a.state);
  out->set_reason(a.reason);
  out->set_exit_code(static_cast<int32_t>(a.exit_code.value_or(0)));
  out->set_signal(static_cast<int32_t>(a.signal.value_or(0)));
  out->set_created_at_ms(a.created_at_ms);
  out->set_started_at_ms(a.started_at_ms.value_or(0));
  out->set_ended_at_ms(a.ended_at_ms.value_or(0));
  out->set_output_dir(a.output_dir);
  out->set_events(a.events);
  out->set_malformed_events(a.malformed);
  out->set_pid(a.pid.value_or(0));
  v1::StartAttempt start;
  if (!a.start_blob.empty() && start.ParseFromString(a.start_blob)) {
    out->mutable_argv()->CopyFrom(start.argv());
    out->set_checkpoint(start.checkpoint());
    out->mutable_gpus()->CopyFrom(start.gpus());
  }
  out->set_ready_at_ms(a.ready_at_ms.value_or(0));
  out->set_borrowed(a.borrowed);
}

}  // namespace longhaul::store
