// Notifications of run, stage and agent events. A notification is written in the same
// transaction as the change that caused it, so it is sent if and only if that change was
// committed; the notifier gets it after the commit.
#include "daemon/notify/sink.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {

void Scheduler::Notice(const std::string& kind, const RunState* run, const StageState* s,
                       int attempt, const std::string& reason, const std::string& agent) {
  if (notifier_ == nullptr) return;
  notify::Event e;
  e.kind = kind;
  if (run != nullptr) {
    e.run_id = run->row.id;
    e.workflow = run->row.workflow_name;
  }
  if (s != nullptr) e.stage = s->row.name;
  e.attempt = attempt;
  e.agent = agent;
  e.reason = reason;
  e.time_ms = clock_->NowMs();
  for (auto& row : notify::PlanNotifications(e, notify_spec_,
                                             run != nullptr ? &run->workflow.notify : nullptr,
                                             ui_base_)) {
    batch_.notices.push_back(std::move(row));
  }
}

Status Scheduler::FlushNotices() {
  for (store::NotificationRow& row : batch_.notices) {
    RETURN_IF_ERROR(store_->InsertNotification(&row));
    batch_.recorded.push_back(std::move(row));
  }
  batch_.notices.clear();
  return OkStatus();
}

}  // namespace longhaul::scheduler
