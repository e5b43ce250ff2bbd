// Runs and stages: submission, cancellation, manual retry, and the stage state transitions.
#include "daemon/scheduler/scheduler.h"

#include <algorithm>
#include <tuple>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/store/proto_convert.h"
#include "proto/stage_merge.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {

Scheduler::Scheduler(store::SqliteStore* store, Clock* clock, AgentLink* link,
                     SchedulerOptions options)
    : store_(store),
      clock_(clock),
      link_(link),
      options_(options),
      rng_(options.seed),
      started_at_ms_(clock->NowMs()),
      last_tick_ms_(clock->NowMs()),
      usage_(options.fair_share_half_life_ms, options.quotas.LongestPeriodMs()),
      quota_book_(options.quotas) {
  gpus_ = GpuFleet(options.gpus);
}

Scheduler::~Scheduler() = default;

const RunState* Scheduler::FindRun(int64_t run_id) const { return runs_.Find(run_id); }

void Scheduler::MarkChanged(StageState* s) {
  Touch(s);
  s->run->changed_stages.insert(s->index);
  batch_.changed_runs.insert(s->run->row.id);
}

void Scheduler::Touch(RunState* r) {
  if (!r->dirty) batch_.dirty_runs.push_back(r);
  r->dirty = true;
  batch_.changed_runs.insert(r->row.id);
}

void Scheduler::Touch(StageState* s) {
  if (!s->dirty) batch_.dirty_stages.push_back(s);
  s->dirty = true;
}

void Scheduler::Touch(AttemptState* a) {
  if (!a->dirty) batch_.dirty_attempts.push_back(a);
  a->dirty = true;
}

void Scheduler::Touch(AgentState* a) {
  if (!a->dirty) batch_.dirty_agents.push_back(a);
  a->dirty = true;
}

void Scheduler::CountStages(RunState* run) {
  run->status_count.fill(0);
  for (const auto& s : run->stages) ++run->status_count[s->row.status];
  TouchTotals(run);
}

void Scheduler::TouchTotals(RunState* run) {
  if (!run->totals_dirty) batch_.dirty_totals.push_back(run);
  run->totals_dirty = true;
}

GpuUse Scheduler::GpuUseOf(const AttemptState& a) {
  if (a.stage == nullptr || !a.row.started_at_ms) return {};
  int64_t gpus = a.stage->row.resources.gpus();
  int64_t start = *a.row.started_at_ms;
  if (a.row.ended_at_ms) return {gpus * std::max<int64_t>(0, *a.row.ended_at_ms - start), 0, 0};
  return {0, gpus, gpus * start};
}

void Scheduler::CountGpuUse(AttemptState* a) {
  GpuUse now = GpuUseOf(*a);
  if (now == a->counted || a->stage == nullptr) return;
  GpuUse& run = a->stage->run->gpu;
  run.ended_ms += now.ended_ms - a->counted.ended_ms;
  run.running += now.running - a->counted.running;
  run.start_ms += now.start_ms - a->counted.start_ms;
  CountScopeUse(*a, a->counted, now);
  a->counted = now;
  TouchTotals(a->stage->run);
  BudgetCheckSoon(a->stage->run);
}

void Scheduler::SetStageStatus(StageState* s, v1::StageStatus status, const std::string& reason) {
  if (s->row.status == v1::STAGE_READY && status != v1::STAGE_READY) {
    ready_.Remove(ReadyEntryOf(s), s->row.resources, PlacementKey(s));
  }
  DropHolds(s, status);
  service_check_needed_ = true;
  --s->run->status_count[s->row.status];
  ++s->run->status_count[status];
  TouchTotals(s->run);
  s->row.status = status;
  if (last_reason_ != reason) last_reason_ = reason;
  s->row.reason = last_reason_;
  int64_t now = clock_->NowMs();
  if (status == v1::STAGE_RUNNING || status == v1::STAGE_STARTING) {
    if (!s->row.started_at_ms) s->row.started_at_ms = now;
    s->row.ended_at_ms.reset();
  }
  if (IsTerminal(status)) {
    s->row.ended_at_ms = now;
    s->row.next_retry_at_ms.reset();
  }
  MarkChanged(s);
}

void Scheduler::MarkReady(StageState* s) {
  // What it waits for until Dispatch places it (cleared when it starts).
  SetStageStatus(s, v1::STAGE_READY, ReadyReason(s));
  s->ready_at_ms = clock_->NowMs();
  s->row.next_retry_at_ms.reset();
  if (BudgetHolds(s)) return;  // its run's budget is reached: it waits outside the queue
  AssignSharePos(s->run);
  ready_.Add(ReadyEntryOf(s), s->row.resources, PlacementKey(s));
  dispatch_needed_ = true;
}

bool Scheduler::DepsSatisfied(const StageState* s) const {
  for (int d : s->deps) {
    const StageState* dep = s->run->stages[d].get();
    v1::StageStatus st = dep->row.status;
    if (st == v1::STAGE_SUCCEEDED || st == v1::STAGE_CACHED) continue;
    if (IsService(dep) && st == v1::STAGE_SERVING) continue;
    // A sweep item its rule stopped: the stage runs with the items that were not (a stage
    // that needs only stopped ones is skipped: SkipIfSweepStopped).
    if (st == v1::STAGE_STOPPED_EARLY) continue;
    return false;
  }
  return true;
}

void Scheduler::StageSucceeded(StageState* s) {
  SetStageStatus(s, v1::STAGE_SUCCEEDED, "");
  Propagate(s);
  MaybeFinishRun(s->run);
}

void Scheduler::StageFailed(StageState* s, v1::StageStatus status, const std::string& reason,
                            const AttemptState* last) {
  SetStageStatus(s, status, reason);
  if (status == v1::STAGE_FAILED) {
    Notice("stage_failed", s->run, s, last != nullptr ? last->row.number : s->row.attempt_count,
           reason, last != nullptr ? last->row.agent_id : "");
  }
  SkipDependents(s);
  Propagate(s);
  MaybeFinishRun(s->run);
}

void Scheduler::SkipDependents(StageState* s) {
  for (int d : s->dependents) {
    StageState* dep = s->run->stages[d].get();
    if (dep->row.status == v1::STAGE_WAITING || dep->row.status == v1::STAGE_READY) {
      SetStageStatus(dep, v1::STAGE_SKIPPED,
                     StrCat("needs '", s->row.name, "', which ", StageStatusLabel(s->row.status)));
      SkipDependents(dep);
      Propagate(dep);
    }
  }
}

void Scheduler::MaybeFinishRun(RunState* run) {
  const auto& n = run->status_count;
  bool any_live = n[v1::STAGE_WAITING] + n[v1::STAGE_READY] + n[v1::STAGE_RUNNING] +
                      n[v1::STAGE_STARTING] + n[v1::STAGE_SERVING] >
                  0;
  if (any_live) return;
  // A stage skipped only because sweep items it needed stopped early does not fail the run.
  bool any_bad = n[v1::STAGE_FAILED] + n[v1::STAGE_CANCELLED] > 0 ||
                 (n[v1::STAGE_SKIPPED] > 0 && HasHarmfulSkip(run));
  v1::RunStatus status = run->cancel_requested ? v1::RUN_CANCELLED
                         : any_bad             ? v1::RUN_FAILED
                                               : v1::RUN_SUCCEEDED;
  if (run->row.status == status && run->row.ended_at_ms) return;
  run->row.status = status;
  run->row.ended_at_ms = clock_->NowMs();
  if (status == v1::RUN_FAILED) {
    std::vector<std::string> failed;
    for (const auto& s : run->stages) {
      if (s->row.status == v1::STAGE_FAILED) failed.push_back(s->row.name);
    }
    run->row.reason = failed.empty() ? "" : StrCat(StrJoin(failed, ", "), " failed");
  } else if (status == v1::RUN_CANCELLED) {
    run->row.reason = "cancelled";
  } else {
    run->row.reason = "";
  }
  Touch(run);
  batch_.ended_runs.insert(run->row.id);
  GetLogger("scheduler")->info("run {} {}", run->row.id, RunStatusName(status));
  // The notification gives a reason for a success too: "4 stages: 3 succeeded, 1 cached".
  std::string why = run->row.reason;
  if (status == v1::RUN_SUCCEEDED) {
    const char* stages = run->stages.size() == 1 ? " stage: " : " stages: ";
    why = StrCat(run->stages.size(), stages, n[v1::STAGE_SUCCEEDED], " succeeded");
    if (n[v1::STAGE_CACHED] > 0) why += StrCat(", ", n[v1::STAGE_CACHED], " cached");
    if (n[v1::STAGE_STOPPED] > 0) why += StrCat(", ", n[v1::STAGE_STOPPED], " services stopped");
    if (n[v1::STAGE_STOPPED_EARLY] > 0) {
      why += StrCat(", ", n[v1::STAGE_STOPPED_EARLY], " stopped early");
      if (n[v1::STAGE_SKIPPED] > 0) why += StrCat(", ", n[v1::STAGE_SKIPPED], " skipped");
    }
  }
  Notice(StrCat("run_", RunStatusName(status)), run, nullptr, 0, why);
}

Result<v1::Run> Scheduler::Cancel(int64_t run_id) {
  RunState* run = runs_.Find(run_id);
  if (run == nullptr) {
    ASSIGN_OR_RETURN(v1::Run stored, store_->GetRun(run_id, false));
    return absl::FailedPreconditionError(
        StrCat("run ", run_id, " already ended (", RunStatusName(stored.status()), ")"));
  }
  run->cancel_requested = true;
  for (auto& s : run->stages) {
    switch (s->row.status) {
      case v1::STAGE_WAITING:
      case v1::STAGE_READY:
        SetStageStatus(s.get(), v1::STAGE_CANCELLED, "cancelled");
        break;
      case v1::STAGE_RUNNING:
      case v1::STAGE_STARTING:
      case v1::STAGE_SERVING:
        if (s->current) {
          StopAttempt(s->current, "cancelled", "cancelled by request");
        } else {
          SetStageStatus(s.get(), v1::STAGE_CANCELLED, "cancelled");
        }
        break;
      default:
        break;
    }
  }
  MaybeFinishRun(run);
  return SnapshotRun(*run, StageSet::kFirstPage);
}

Result<v1::Run> Scheduler::Retry(int64_t run_id, const std::string& stage_name) {
  ASSIGN_OR_RETURN(RunState * run, LoadRunIntoMemory(run_id));
  // An ended run brought back only to be refused goes out of memory again after the batch.
  if (IsTerminal(run->row.status)) batch_.ended_runs.insert(run_id);
  if (run->row.collected_at_ms) {
    return absl::FailedPreconditionError(
        StrCat("run ", run_id,
               " was collected by retention: its logs and outputs are gone; "
               "pivot it instead (longhaul pivot ",
               run_id, ")"));
  }
  if (run->cancel_requested && !IsTerminal(run->row.status)) {
    return absl::FailedPreconditionError(
        StrCat("run ", run_id, " is being cancelled; retry it once it has ended"));
  }
  auto retryable = [](v1::StageStatus st) {
    return st == v1::STAGE_FAILED || st == v1::STAGE_CANCELLED || st == v1::STAGE_SKIPPED;
  };
  std::vector<StageState*> roots;
  if (!stage_name.empty()) {
    StageState* s = run->Find(stage_name);
    if (s == nullptr) {
      return absl::NotFoundError(StrCat("run ", run_id, " has no stage '", stage_name, "'"));
    }
    if (!retryable(s->row.status)) {
      return absl::FailedPreconditionError(StrCat("stage '", stage_name, "' of run ", run_id,
                                                  " is ", StageStatusName(s->row.status),
                                                  "; only failed, cancelled or skipped stages "
                                                  "can be retried"));
    }
    for (int d : s->deps) {
      StageState* dep = run->stages[d].get();
      if (dep->row.status != v1::STAGE_SUCCEEDED && dep->row.status != v1::STAGE_CACHED &&
          !retryable(dep->row.status)) {
        continue;
      }
      if (retryable(dep->row.status)) {
        return absl::FailedPreconditionError(
            StrCat("stage '", stage_name, "' needs '", dep->row.name, "', which ",
                   StageStatusName(dep->row.status), "; retry '", dep->row.name, "' first"));
      }
    }
    roots.push_back(s);
  } else {
    for (auto& s : run->stages) {
      if (s->row.status == v1::STAGE_FAILED || s->row.status == v1::STAGE_CANCELLED) {
        roots.push_back(s.get());
      }
    }
    if (roots.empty()) {
      return absl::FailedPreconditionError(
          StrCat("run ", run_id, " has no failed or cancelled stage to retry"));
    }
  }
  // Reset the roots and every dependent that did not succeed, nothing else.
  std::set<int> reset;
  std::vector<int> stack;
  for (StageState* s : roots) stack.push_back(s->index);
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    if (!reset.insert(i).second) continue;
    for (int d : run->stages[i]->dependents) {
      if (retryable(run->stages[d]->row.status)) stack.push_back(d);
    }
  }
  run->cancel_requested = false;
  run->row.status = v1::RUN_RUNNING;
  run->row.ended_at_ms.reset();
  run->row.reason = "";
  Touch(run);
  batch_.ended_runs.erase(run_id);
  for (int i : reset) {
    StageState* s = run->stages[i].get();
    s->row.retries_used = 0;
    s->row.infra_retries_used = 0;
    s->row.started_at_ms.reset();
    s->row.ended_at_ms.reset();
    s->retry_gen++;
    SetStageStatus(s, v1::STAGE_WAITING, "");
  }
  for (int i : reset) MaybeReady(run->stages[i].get());
  GetLogger("scheduler")->info("run {}: retrying {} stage(s)", run_id, reset.size());
  return SnapshotRun(*run, StageSet::kFirstPage);
}

bool Scheduler::RunIsActive(int64_t run_id) const {
  const RunState* run = runs_.Find(run_id);
  return run != nullptr && !IsTerminal(run->row.status);
}

v1::Run Scheduler::SnapshotRun(const RunState& run, StageSet stages) const {
  v1::Run out;
  store::RunRowToProto(run.row, &out);
  out.set_description(run.workflow.description);
  FillBudget(run, &out);
  int64_t now = clock_->NowMs();
  if (run.row.started_at_ms) {
    int64_t end = run.row.ended_at_ms.value_or(now);
    out.set_wall_seconds(static_cast<double>(std::max<int64_t>(0, end - *run.row.started_at_ms)) /
                         1000.0);
  }
  auto add = [&](const StageState& s) {
    v1::Stage* st = out.add_stages();
    store::StageRowToProto(s.row, st);
    // The columns the model dropped once stored (StageState): from the spec. The fingerprint
    // is left to GetRun, which reads the store.
    for (const std::string& need : s.spec->needs) st->add_needs(need);
    st->set_description(s.spec->description.str());
    if (s.extras) {
      for (const auto& [name, m] : s.extras->latest_metrics) *st->add_metrics() = m;
    }
    if (s.current) st->set_agent_id(s.current->row.agent_id);
    if (s.row.cached_from_stage_id && s.extras && s.extras->cached_from_run_id != 0) {
      st->set_cached_from_run_id(s.extras->cached_from_run_id);
      st->set_cached_from_stage(s.extras->cached_from_stage);
    }
    // What it cost so far: as the store computes it (a running attempt counts up to now).
    int64_t wall_ms = s.ended_wall_ms;
    for (const auto& a : s.attempts) {
      if (!a->row.started_at_ms) continue;
      int64_t end = a->row.ended_at_ms.value_or(now);
      wall_ms += std::max<int64_t>(0, end - *a->row.started_at_ms);
    }
    st->set_wall_seconds(static_cast<double>(wall_ms) / 1000.0);
    st->set_gpu_hours(static_cast<double>(wall_ms) * s.row.resources.gpus() / 3'600'000.0);
  };
  // A watch update costs what changed, not the run's size.
  switch (stages) {
    case StageSet::kChanged:
      for (int i : run.changed_stages) add(*run.stages[i]);
      break;
    case StageSet::kAll:
      for (const auto& s : run.stages) add(*s);
      break;
    case StageSet::kFirstPage: {
      for (int st = 0; st < v1::StageStatus_ARRAYSIZE; ++st) {
        if (run.status_count[st] == 0) continue;
        (*out.mutable_stage_counts())[std::string(StageStatusName(
            static_cast<v1::StageStatus>(st)))] = static_cast<int32_t>(run.status_count[st]);
      }
      int n = static_cast<int>(run.stages.size());
      for (int i = 0; i < std::min(n, kMaxStagesPerMessage); ++i) add(*run.stages[i]);
      int end = EndOfPiece(out.stages(), 0, out.stages_size());
      if (end < out.stages_size()) {
        out.mutable_stages()->DeleteSubrange(end, out.stages_size() - end);
      }
      if (end < n) out.set_next_stage_page_token(std::to_string(end));
      break;
    }
  }
  return out;
}

SchedulerGauges Scheduler::Gauges() const {
  SchedulerGauges g;
  // O(runs + live attempts), not O(stages): a scrape during a 100,000-stage run stays cheap.
  for (const auto& [id, run] : runs_) {
    for (int st = 0; st < v1::StageStatus_ARRAYSIZE; ++st) {
      if (run->status_count[st] == 0) continue;
      g.stages[std::string(StageStatusName(static_cast<v1::StageStatus>(st)))] +=
          run->status_count[st];
    }
  }
  std::vector<const StageState*> running;  // in run and stage order
  for (const auto& [attempt_id, a] : runs_.live_attempts()) {
    const StageState* s = a->stage;
    if (s != nullptr && s->current == a && a->row.state == v1::ATTEMPT_RUNNING)
      running.push_back(s);
  }
  std::sort(running.begin(), running.end(), [](const StageState* x, const StageState* y) {
    return std::tie(x->run->row.id, x->index) < std::tie(y->run->row.id, y->index);
  });
  for (const StageState* s : running) {
    SchedulerGauges::Running& r = g.running.emplace_back();
    r.run_id = s->run->row.id;
    r.stage = s->row.name;
    r.agent = s->current->row.agent_id;
    if (s->row.progress && s->row.progress->total > 0) {
      r.progress_ratio = s->row.progress->done / s->row.progress->total;
      r.eta_seconds = s->row.progress->eta_seconds;
    }
  }
  for (const auto& [id, a] : agents_) {
    ++g.agents[std::string(AgentStateName(a->row.state))];
    if (a->session == 0) continue;
    g.agent_disks.push_back({a->row.id, a->disk_full, a->state_free_bytes});
    g.gpus_total += a->row.resources.gpus();
    for (int i = 0; i < a->row.resources.gpus(); ++i) {
      bool busy = i < static_cast<int>(a->gpu_busy.size()) && a->gpu_busy[i];
      if (busy) {
        ++g.gpus_busy;
      } else if (GpuOut(*a, i)) {
        ++g.gpus_out;
      }
      SchedulerGauges::Gpu& gpu = g.gpus.emplace_back();
      gpu.agent = id;
      gpu.info.set_index(i);
      for (const v1::GpuInfo& known : a->gpu_info) {
        if (known.index() == i) gpu.info = known;
      }
      gpus_.Fill(id, &gpu.info);
    }
  }
  g.teams = TeamGauges();
  return g;
}

std::vector<v1::AgentInfo> Scheduler::ListAgents() const {
  std::vector<v1::AgentInfo> out;
  for (const auto& [id, a] : agents_) {
    v1::AgentInfo info;
    info.set_id(id);
    info.set_hostname(a->row.hostname);
    *info.mutable_total() = a->row.resources;
    *info.mutable_free() = a->free;
    info.set_state(a->row.state);
    info.set_last_seen_ms(a->row.last_seen_ms);
    info.set_connected_at_ms(a->row.connected_at_ms);
    info.set_running_attempts(static_cast<int32_t>(a->attempts.size()));
    for (const auto& [k, v] : a->row.labels) (*info.mutable_labels())[k] = v;
    for (const std::string& p : a->row.shared_paths) info.add_shared_paths(p);
    info.set_version(a->row.version);
    info.set_executor(a->row.executor);
    info.set_disk_full(a->disk_full);
    info.set_state_free_bytes(a->state_free_bytes);
    FillDrain(id, &info);
    FillReservations(id, &info);
    // One entry per GPU offered, with what the agent told of it and the attempt holding it.
    for (int g = 0; g < a->row.resources.gpus(); ++g) {
      v1::GpuInfo* gpu = info.add_gpus();
      for (const v1::GpuInfo& known : a->gpu_info) {
        if (known.index() == g) *gpu = known;
      }
      gpu->set_index(g);
      gpus_.Fill(id, gpu);
    }
    for (int64_t attempt_id : a->attempts) {
      const AttemptState* live = runs_.FindAttempt(attempt_id);
      if (live == nullptr) continue;
      const AttemptState& at = *live;
      for (int g : at.gpus) {
        if (g < 0 || g >= info.gpus_size()) continue;
        v1::GpuInfo* gpu = info.mutable_gpus(g);
        gpu->set_attempt_id(attempt_id);
        gpu->set_run_id(at.row.run_id);
        if (at.stage) gpu->set_stage(at.stage->row.name);
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

Status Scheduler::Watch(int64_t run_id, std::shared_ptr<Watcher> watcher) {
  v1::RunUpdate update;
  update.set_snapshot(true);
  const RunState* run = runs_.Find(run_id);
  if (run == nullptr) {
    ASSIGN_OR_RETURN(*update.mutable_run(), store_->GetRun(run_id, false));
    watcher->Push(update, /*final=*/IsTerminal(update.run().status()));
    return OkStatus();
  }
  // Pushed and registered after the commit, so a watcher never sees a state the store might
  // not keep, and one whose batch failed is not kept (its caller got the commit's error).
  // Registered before the batch's changes are published: it hears those made after the
  // snapshot.
  *update.mutable_run() = SnapshotRun(*run, StageSet::kAll);
  bool final = IsTerminal(run->row.status) && !batch_.changed_runs.count(run_id);
  batch_.after_commit.push_back([this, run_id, watcher = std::move(watcher), update, final] {
    watcher->Push(update, final);
    if (!final) watchers_[run_id].push_back(watcher);
  });
  return OkStatus();
}

}  // namespace longhaul::scheduler
