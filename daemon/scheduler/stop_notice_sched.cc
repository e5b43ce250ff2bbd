// Notices before a stop on the scheduler's side (docs/scheduling.md, "A notice before the
// stop"): the notice sent to the agent, its timer, the checkpoint that ends it early, and the
// waiting stage's reason while one is out. The record is stop_notice.h's.
#include <algorithm>
#include <vector>

#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {

bool Scheduler::StopAtCheckpoint(AttemptState* a, const std::string& kind,
                                 const std::string& detail, const std::string& text) {
  if (notices_.Find(a->row.id) != nullptr) return true;  // noticed before: stopped when due
  const StageState* s = a->stage;
  bool may_notice = s != nullptr && s->spec->preempt_notice_ms.has_value() &&
                    a->kill_reason.empty() && a->row.state == v1::ATTEMPT_RUNNING;
  if (!may_notice) {
    StopAttempt(a, kind, detail);
    return false;
  }
  int64_t now = clock_->NowMs();
  StopNotice n;
  n.at_ms = now;
  n.deadline_ms = now + *s->spec->preempt_notice_ms;
  n.kind = kind;
  n.detail = detail;
  n.text = text;
  v1::CoordinatorMessage msg;
  v1::PreemptNotice* pn = msg.mutable_preempt_notice();
  pn->set_attempt_id(a->row.id);
  pn->set_deadline_ms(n.deadline_ms);
  pn->set_reason(StrCat(kind, ": ", detail));
  SendToAgent(a->row.agent_id, msg);
  timers_.Push({n.deadline_ms, TimerKind::kStopNotice, a->row.id, "", a->timer_gen});
  GetLogger("scheduler")
      ->info("attempt {}: asked to checkpoint before it is stopped ({}: {}); notice until {}",
             a->row.id, kind, detail, NoticeClockText(n.deadline_ms));
  notices_.Add(a->row.id, std::move(n));
  return true;
}

void Scheduler::NoticedCheckpoint(AttemptState* a) {
  if (!a->kill_reason.empty()) return;
  std::optional<StopNotice> n = notices_.Take(a->row.id);
  if (!n) return;
  StopAttempt(a, n->kind, StrCat(n->detail, "; at the checkpoint it wrote on notice"));
}

void Scheduler::FireStopNoticeTimer(const Timer& t) {
  AttemptState* a = runs_.FindAttempt(t.id);
  if (a == nullptr || a->timer_gen != t.generation || !a->kill_reason.empty()) return;
  std::optional<StopNotice> n = notices_.Take(a->row.id);
  if (!n) return;
  StopAttempt(a, n->kind,
              StrCat(n->detail, "; no checkpoint within its notice of ",
                     FormatDurationMs(n->deadline_ms - n->at_ms)));
}

std::string Scheduler::NoticeReason(const std::set<int64_t>& victims, const std::string& agent_id,
                                    size_t* noticed) const {
  std::vector<std::string> asked;
  int64_t until = 0;
  for (int64_t id : victims) {
    const StopNotice* n = notices_.Find(id);
    if (n == nullptr) continue;
    asked.push_back(n->text);
    until = std::max(until, n->deadline_ms);
  }
  *noticed = asked.size();
  if (asked.empty()) return "";
  return StrCat("; asked ", StrJoin(asked, ", "), " on ", agent_id, " to checkpoint (notice until ",
                NoticeClockText(until), ")");
}

}  // namespace longhaul::scheduler
