// Preemption on the scheduler's side (docs/scheduling.md, "Preemption"): which running
// attempts a waiting stage of a higher class may take room from, the stops, their record, and
// how a stopped attempt's stage goes back to be run again. The rule is preemption.cc's.
#include <algorithm>
#include <set>

#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {
namespace {

constexpr int kPreemptLowestRank = static_cast<int>(std::size(workflow::kPriorityClasses)) - 1;

int PreemptRankOf(const RunState& run) { return workflow::PriorityRankOrNormal(run.row.priority); }

std::string PreemptClassName(int rank) { return std::string(workflow::kPriorityClasses[rank]); }

// "; preempting run 12 stage train (low) on n1, to take its room", for a wait reason.
std::string PreemptingReason(const PreemptionBook::Pending& p) {
  return StrCat("; preempting ", p.text, " on ", p.agent_id, " for its room");
}

}  // namespace

std::string Scheduler::PreemptWaitReason(const PreemptionBook::Pending& p) const {
  size_t noticed = 0;
  std::string asked = NoticeReason(p.victims, p.agent_id, &noticed);
  if (noticed == 0) return PreemptingReason(p);
  // Those asked to checkpoint are named once; "preempting" names them all when some are not.
  return noticed == p.victims.size() ? asked : StrCat(PreemptingReason(p), asked);
}

std::string Scheduler::PreemptStageText(const StageState& s) {
  return StrCat("run ", s.run->row.id, " stage ", s.row.name, " (",
                PreemptClassName(PreemptRankOf(*s.run)), ")");
}

int64_t Scheduler::SavedUpTo(const AttemptState& a) {
  int64_t start = a.row.started_at_ms.value_or(a.row.created_at_ms);
  // Only a `resume` stage's next attempt is given the checkpoint; any other starts over.
  bool resumes = a.stage != nullptr && a.stage->spec->resume;
  return resumes ? std::max(start, a.checkpoint_at_ms) : start;
}

bool Scheduler::MayPreempt(const AttemptState* v, int rank) const {
  if (v == nullptr || v->stage == nullptr || v->stage->current != v) return false;
  const StageState* vs = v->stage;
  if (!v->kill_reason.empty() || v->exit_reported || IsTerminal(v->row.state)) return false;
  if (notices_.Find(v->row.id) != nullptr) return false;  // to be stopped at its checkpoint
  if (vs->run->cancel_requested || PreemptRankOf(*vs->run) <= rank) return false;
  if (!vs->spec->preemptible) return false;
  // Its next attempt would be its last infrastructure retry spent: stopping it would fail it.
  if (vs->row.infra_retries_used >= vs->spec->retry.infra_limit) return false;
  if (IsService(vs)) {  // not while a consumer runs against it
    for (int d : vs->dependents) {
      if (vs->run->stages[d]->current != nullptr) return false;
    }
  }
  return true;
}

AgentState* Scheduler::PreemptFor(StageState* s, std::string* reason) {
  PreemptionBook::StageKey key{s->run->row.id, s->index};
  if (const PreemptionBook::Pending* p = preemptions_.Find(key)) {
    *reason += PreemptWaitReason(*p);
    return agents_.Find(p->agent_id);
  }
  if (IsService(s)) return nullptr;
  int rank = PreemptRankOf(*s->run);
  // Cheap first, O(runs in memory): most passes find no run of a lower class running anything,
  // and then no agent's attempts need a look.
  bool lower_runs = false;
  for (const auto& [id, run] : runs_) {
    if (rank >= kPreemptLowestRank) break;
    const auto& n = run->status_count;
    if (PreemptRankOf(*run) > rank &&
        n[v1::STAGE_RUNNING] + n[v1::STAGE_STARTING] + n[v1::STAGE_SERVING] > 0) {
      lower_runs = true;
      break;
    }
  }
  // A GPU stage of a team or user under its guaranteed GPUs takes back what others borrowed,
  // whatever their class (docs/scheduling.md, "Borrowed GPUs").
  std::set<int64_t> reclaim;
  std::string owner = ShareAccountOf(s->run->row.user, s->run->row.team);
  if (!options_.quotas.empty() && s->row.resources.gpus() > 0) {
    for (int64_t id : ReclaimFor(owner, s->row.resources.gpus())) reclaim.insert(id);
  }
  if (!lower_runs && reclaim.empty()) return nullptr;
  // A stage that would borrow stops nothing within another account's guarantee (quota.h).
  std::map<int64_t, std::string> spared = SparedFor(s);
  std::string spared_account;
  int64_t now = clock_->NowMs();
  std::vector<AgentRoom> rooms;
  std::vector<PreemptCandidate> candidates;
  for (auto& [id, agent] : agents_) {
    // An agent the stage may not go to, or whose drain keeps it off, frees nothing for it.
    if (!MayGoTo(s, *agent) || DrainKeepsOff(s, *agent) || ReservationKeepsOffEver(s, *agent)) {
      continue;
    }
    rooms.push_back({id, agent->free});
    for (int64_t attempt_id : agent->attempts) {
      AttemptState* v = runs_.FindAttempt(attempt_id);
      bool reclaimed =
          !MayPreempt(v, rank) && reclaim.count(attempt_id) > 0 && MayPreempt(v, /*rank=*/-1);
      if (!reclaimed && !MayPreempt(v, rank)) continue;
      if (auto it = spared.find(attempt_id); it != spared.end()) {
        spared_account = it->second;
        continue;
      }
      PreemptCandidate& c = candidates.emplace_back();
      c.attempt_id = attempt_id;
      c.agent_id = id;
      // A reclaimed attempt ranks as the lowest class: borrowed GPUs go first.
      c.rank = reclaimed ? kPreemptLowestRank + 1 : PreemptRankOf(*v->stage->run);
      c.lost_ms = std::max<int64_t>(0, now - SavedUpTo(*v));
      c.lost_gpu_ms = c.lost_ms * v->held.gpus();
      c.frees = v->held;
      for (int g : v->gpus) {  // a GPU out of service does not come back free
        if (GpuOut(*agent, g)) c.frees.set_gpus(c.frees.gpus() - 1);
      }
    }
  }
  std::optional<PreemptChoice> choice =
      ChooseVictims(std::move(candidates), rooms, s->row.resources);
  if (!choice) {
    if (!spared_account.empty()) *reason += SparedReason(options_.quotas, owner, spared_account);
    return nullptr;
  }

  PreemptionBook::Pending pending;
  pending.agent_id = choice->agent_id;
  std::vector<std::string> texts;
  std::string for_whom = StrCat("room for ", PreemptStageText(*s));
  auto log = GetLogger("scheduler");
  for (const PreemptCandidate& c : choice->victims) {
    AttemptState* v = runs_.FindAttempt(c.attempt_id);
    std::string victim = PreemptStageText(*v->stage);
    std::string lost = StrCat(GpuMinutesText(c.lost_gpu_ms), " since its ",
                              SavedUpTo(*v) == v->checkpoint_at_ms ? "last checkpoint" : "start");
    log->info("{} waits for {} GPUs on {}: preempting attempt {} of {} ({})", PreemptStageText(*s),
              s->row.resources.gpus(), choice->agent_id, v->row.number, victim, lost);
    std::string why = for_whom;
    if (reclaim.count(c.attempt_id) > 0 &&
        PreemptRankOf(*v->stage->run) <= PreemptRankOf(*s->run)) {
      why += StrCat(", taking back borrowed GPUs for ", AccountLabel(owner), "'s guarantee");
    }
    if (StopAtCheckpoint(v, "preempted", why, victim)) {
      lost += StrCat("; asked to checkpoint first, within ",
                     FormatDurationMs(*v->stage->spec->preempt_notice_ms));
    }
    v->row.stop_for_stage_id = s->row.id;  // for RecoverPreemptions
    v->stage->Extras().preempted_by = PreemptedByText(PreemptStageText(*s), now);
    v1::AuditEntry e;
    e.set_ts_ms(now);
    e.set_principal("longhauld");
    e.set_role("admin");
    e.set_action("PreemptAttempt");
    e.set_target(
        StrCat("run ", v->row.run_id, " stage ", v->stage->row.name, " attempt ", v->row.number));
    e.set_detail(StrCat(why, " on agent ", choice->agent_id, "; ", lost));
    e.set_result("OK");
    gpu_audit_.push_back(std::move(e));
    pending.victims.insert(c.attempt_id);
    texts.push_back(victim);
  }
  pending.text = StrJoin(texts, ", ");
  preemptions_.Add(key, std::move(pending));
  *reason += PreemptWaitReason(*preemptions_.Find(key));
  return agents_.Find(choice->agent_id);
}

bool Scheduler::PreemptedEnded(StageState* s, AttemptState* a, const std::string& kind) {
  // A Slurm preemption has the same kind, and no kill reason: it is retried as a failure.
  if (kind != "preempted" || a->kill_reason != "preempted") return false;
  s->row.infra_retries_used++;
  int64_t saved = SavedUpTo(*a);
  int64_t lost_gpu_ms =
      std::max<int64_t>(0, a->row.ended_at_ms.value_or(clock_->NowMs()) - saved) * a->held.gpus();
  a->row.reason = StrCat(a->row.reason, "; ", GpuMinutesText(lost_gpu_ms), " after its ",
                         saved == a->checkpoint_at_ms ? "last checkpoint" : "start");
  Touch(a);
  if (metrics_ != nullptr) {
    metrics_->preemptions.Add(PreemptClassName(PreemptRankOf(*s->run)));
    metrics_->preemption_lost_gpu_ms += static_cast<uint64_t>(lost_gpu_ms);
  }
  return true;
}

}  // namespace longhaul::scheduler
