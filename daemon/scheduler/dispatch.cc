// Placing ready stages on agents and building their StartAttempt.
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/resources.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/workflow/template.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {
namespace {

std::string DescribeNeed(const v1::Resources& r) {
  std::vector<std::string> parts;
  parts.push_back(StrCat(r.cpus(), " cpus"));
  if (r.memory_bytes() > 0) parts.push_back(StrCat(r.memory_bytes() >> 20, " MiB"));
  if (r.gpus() > 0) parts.push_back(StrCat(r.gpus(), " GPUs"));
  return StrJoin(parts, ", ");
}

// How many stages behind a full shape's head get their place in line each pass.
constexpr size_t kLineShown = 8;

}  // namespace

void Scheduler::Dispatch() {
  if (!dispatch_needed_) {
    BreakServiceWait();
    return;
  }
  dispatch_needed_ = false;
  if (ready_.empty()) return;
  PrepareQuotas();  // the fair-share order, and who waits under a guarantee (quota_sched.cc)
  // Consumers' holds (AdmitService) are not free to anyone else during the passes.
  ApplyHolds();
  // What the roomiest agent offers in each dimension: a stage that asks for more fits nowhere,
  // which is a cheap test to make before looking at every agent.
  v1::Resources most;
  bool any = false;
  auto roomiest = [&] {
    most = v1::Resources();
    for (auto& [id, a] : agents_) {
      if (a->session == 0 || !a->reachable) continue;
      any = true;
      MaxInto(&most, a->free);
    }
  };
  roomiest();
  if (!any) {
    UnapplyHolds();
    // No agent at all: the waiting stages say so (the oldest of each shape, as below).
    ready_.Pass([&](ReadyQueue::Entry e) {
      StageState* s = runs_.StageAt(e.run_id, e.index);
      if (std::string reason = ReadyReason(s); reason != s->row.reason) {
        s->row.reason = std::move(reason);
        MarkChanged(s);
      }
      return ReadyQueue::Outcome::kNoRoom;
    });
    return;
  }
  // Consumers that hold room go first, each into its own hold: the ready queue skips the
  // rest of a shape once its oldest stage finds no room, and a younger stage of that shape
  // may be the one whose room is held.
  std::vector<std::pair<int64_t, int>> held_ready;
  for (const auto& [key, h] : holds_) held_ready.push_back(key);
  for (const auto& [run_id, index] : held_ready) {
    RunState* run = runs_.Find(run_id);
    if (run == nullptr) continue;
    StageState* s = run->stages[static_cast<size_t>(index)].get();
    if (s->row.status != v1::STAGE_READY || IsService(s) || s->run->budget_paused) continue;
    if (QuotaHolds(s)) continue;
    Unhold(s);
    AgentState* agent = PickAgent(s);
    if (agent == nullptr) {
      Rehold(s);
      continue;
    }
    if (Status st = StartAttemptOn(s, agent); !st.ok()) {
      GetLogger("scheduler")->warn("run {} stage {}: {}", run_id, s->row.name, ToStd(st.message()));
    }
  }
  roomiest();
  // Gang reservation. A stage that asks for GPUs and finds no room holds back, for the rest of
  // the pass, what it needs of what is free on the agent it waits for (GangAgent): the younger
  // stages the pass visits next cannot take it, so as the stages there end, the free GPUs
  // add up until it fits. Without this, 1-GPU stages that keep arriving take each GPU as it
  // frees and an 8-GPU stage waits forever. Younger stages still use what it does not need
  // there (CPUs beyond its own, other agents). Passes visit the oldest stage first, so the
  // oldest waiting GPU stage reserves first.
  struct Held {
    AgentState* agent;
    v1::Resources hold;
    const StageState* by;
  };
  std::vector<Held> held;
  auto reserve = [&](const StageState* s, AgentState* a) {
    if (a == nullptr) a = GangAgent(s);
    if (a == nullptr) return;  // no agent could ever hold it: it reserves nothing
    v1::Resources hold = MinResources(a->free, s->row.resources);
    SubtractResources(&a->free, hold);
    held.push_back({a, std::move(hold), s});
  };
  // For the reason of a stage that finds no room: " (n2's free resources are held for ...)"
  // when an agent it may go to would have room but for a reservation.
  auto held_for = [&](const StageState* s) -> std::string {
    for (const Held& h : held) {
      v1::Resources would = h.agent->free;
      AddResources(&would, h.hold);
      if (!Fits(would, s->row.resources) || !MayGoTo(s, *h.agent)) continue;
      return StrCat(" (", h.agent->row.id, "'s free resources are held for run ", h.by->run->row.id,
                    " stage ", h.by->row.name, ", which asks for ", h.by->row.resources.gpus(),
                    " GPUs and waits first)");
    }
    return "";
  };
  auto no_room = [&](StageState* s, std::string behind) {
    // Agents come and go: say whether any could take it at all (node_selector, inputs), and
    // whether a reservation or services keep it back. One stage per shape a pass, the oldest.
    std::string reason = ReadyReason(s) + behind;
    if (reason != s->row.reason) {
      s->row.reason = std::move(reason);
      MarkChanged(s);
    }
    return ReadyQueue::Outcome::kNoRoom;
  };
  // First the tasks (and ready consumers before any new service: a consumer of a service that
  // serves is how that service ends), then the services, each only together with room for a
  // consumer (AdmitService), and none while a consumer of a running service finds no room.
  bool consumer_waits = false;
  bool services_ready = false;
  WaitLine line;  // where each waiting stage stands behind higher classes
  tasks_wait_ = false;
  ready_.Pass([&](ReadyQueue::Entry e) {
    StageState* s = runs_.StageAt(e.run_id, e.index);
    if (IsService(s)) {
      services_ready = true;
      return ReadyQueue::Outcome::kSkip;  // its turn is the next pass; tasks of its shape go on
    }
    // A quota keeps it back (its reason says which): the next of its shape may be another's.
    if (QuotaHolds(s)) return ReadyQueue::Outcome::kSkip;
    if (Unhold(s)) roomiest();
    AgentState* agent = Fits(most, s->row.resources) ? PickAgent(s) : nullptr;
    if (agent == nullptr) {
      Rehold(s);
      // Kept off an agent with room by its drain: a shorter stage of its shape may still fit.
      if (DrainHolds(s) || ReservationHolds(s)) return ReadyQueue::Outcome::kSkip;
      tasks_wait_ = true;
      if (ConsumesLiveService(s)) consumer_waits = true;
      std::string behind = held_for(s);
      // A preemption makes room on one agent: the stage holds what frees there meanwhile.
      AgentState* making = PreemptFor(s, &behind);
      if (making != nullptr || s->row.resources.gpus() > 0) reserve(s, making);
      ReadyQueue::Outcome outcome = no_room(s, behind + HeldByServices(s) + line.Place(s));
      // The pass skips the rest of this shape: the first few behind say where they stand (and
      // may preempt too, since they fit nowhere either).
      for (ReadyQueue::Entry b : ready_.Behind(e, s->row.resources, PlacementKey(s), kLineShown)) {
        StageState* next = runs_.StageAt(b.run_id, b.index);
        std::string preempting;
        if (AgentState* m = PreemptFor(next, &preempting)) reserve(next, m);
        no_room(next, preempting + HeldByServices(next) + line.Place(next));
      }
      return outcome;
    }
    Status st = StartAttemptOn(s, agent);
    if (!st.ok()) {
      GetLogger("scheduler")
          ->warn("run {} stage {}: {}", e.run_id, s->row.name, ToStd(st.message()));
    }
    roomiest();
    return ReadyQueue::Outcome::kTaken;
  });
  if (services_ready) {
    ready_.Pass([&](ReadyQueue::Entry e) {
      StageState* s = runs_.StageAt(e.run_id, e.index);
      if (!IsService(s)) return ReadyQueue::Outcome::kSkip;  // had its turn
      if (QuotaHolds(s)) return ReadyQueue::Outcome::kSkip;
      if (consumer_waits) {
        return no_room(s, " (a consumer of a running service waits for room, and goes first)");
      }
      if (!AdmitService(s)) {
        // Another service of its shape may have a consumer that can run: it is offered next.
        no_room(s, " together with room for a consumer that needs it");
        return ReadyQueue::Outcome::kSkip;
      }
      roomiest();
      return ReadyQueue::Outcome::kTaken;
    });
  }
  // The reservations last one pass: the next one makes them anew from what is free then.
  for (const Held& h : held) AddResources(&h.agent->free, h.hold);
  UnapplyHolds();
  BreakServiceWait();
}

std::string Scheduler::WaitingReason(const v1::Resources& need) {
  return StrCat("waiting for an agent with ", DescribeNeed(need), " free");
}

std::string Scheduler::OutputDir(const StageState* s, const AgentState* agent, int number) const {
  std::string dir = StrCat(agent->row.data_dir, "/runs/", s->run->row.id, "/", s->row.name);
  if (!s->spec->resume) dir += StrCat("/attempt-", number);
  return dir;
}

Status Scheduler::StartAttemptOn(StageState* s, AgentState* agent) {
  RunState* run = s->run;
  int number = s->row.attempt_count + 1;
  std::string output_dir = OutputDir(s, agent, number);

  workflow::TemplateContext ctx;
  ctx.params = &run->row.params;
  ctx.outputs = [run](const std::string& stage,
                      const std::string& name) -> std::optional<std::string> {
    StageState* up = run->Find(stage);
    if (up == nullptr) return std::nullopt;
    auto it = up->row.outputs.find(name);
    if (it == up->row.outputs.end()) return std::nullopt;
    return it->second;
  };
  ctx.tags = [run](const std::string& key) -> std::optional<std::string> {
    auto it = run->tag_values.find(key);
    if (it == run->tag_values.end()) return std::nullopt;
    return it->second;
  };
  ctx.output_dir = output_dir;
  ctx.run_id = run->row.id;
  const std::string& wf_path = run->row.workflow_path;
  if (!wf_path.empty() && wf_path[0] == '/')
    ctx.workflow_dir = wf_path.substr(0, wf_path.rfind('/'));

  v1::StartAttempt start;
  for (const std::string& arg : s->spec->run) {
    Result<std::string> expanded = workflow::ExpandTemplate(arg, ctx);
    if (!expanded.ok()) {
      StageFailed(s, v1::STAGE_FAILED,
                  StrCat("cannot start: ", ToStd(expanded.status().message())));
      return expanded.status();
    }
    start.add_argv(*expanded);
  }
  for (const auto& [key, value] : s->spec->env) {
    Result<std::string> expanded = workflow::ExpandTemplate(value, ctx);
    if (!expanded.ok()) {
      StageFailed(s, v1::STAGE_FAILED,
                  StrCat("cannot start: env ", key, ": ", ToStd(expanded.status().message())));
      return expanded.status();
    }
    (*start.mutable_env())[key] = *expanded;
  }

  auto attempt = std::make_unique<AttemptState>();
  AttemptState* a = attempt.get();
  a->stage = s;
  a->row.stage_id = s->row.id;
  a->row.run_id = run->row.id;
  a->row.number = number;
  a->row.agent_id = agent->row.id;
  a->row.state = v1::ATTEMPT_STARTING;
  a->row.output_dir = output_dir;
  a->row.created_at_ms = clock_->NowMs();
  if (s->ready_at_ms > 0) a->row.ready_at_ms = s->ready_at_ms;
  RETURN_IF_ERROR(store_->InsertAttempt(&a->row));

  // Resources and GPUs held until the attempt ends.
  a->held = s->row.resources;
  SubtractResources(&agent->free, a->held);
  for (size_t g = 0;
       g < agent->gpu_busy.size() && static_cast<int>(a->gpus.size()) < a->held.gpus(); ++g) {
    if (!agent->gpu_busy[g] && !GpuOut(*agent, static_cast<int>(g))) {
      agent->gpu_busy[g] = true;
      a->gpus.push_back(static_cast<int>(g));
    }
  }
  a->holds_resources = true;
  agent->attempts.insert(a->row.id);
  // Counts for its team's and user's quotas and fair share; beyond the guarantee, it borrows.
  a->row.borrowed = UsageStarted(a);

  start.set_attempt_id(a->row.id);
  start.set_run_id(run->row.id);
  start.set_stage(s->row.name);
  start.set_attempt(number);
  start.set_output_dir(output_dir);
  bool resume = s->spec->resume && number > 1;
  start.set_resume(resume);
  if (resume) start.set_checkpoint(s->row.checkpoint.str());
  for (int g : a->gpus) start.add_gpus(g);
  *start.mutable_resources() = a->held;
  start.set_grace_ms(s->spec->grace_ms);
  start.set_preflight(s->spec->preflight);
  start.set_priority(run->row.priority);
  if (s->spec->timeout_ms) start.set_timeout_ms(*s->spec->timeout_ms);
  if (s->avoid != nullptr) {
    for (const std::string& node : s->avoid->nodes) start.add_exclude_nodes(node);
  }
  a->row.start_blob = start.SerializeAsString();
  Touch(a);

  s->row.attempt_count = number;
  s->row.agent_id = agent->row.id;
  s->current = a;
  if (s->spec->resume) s->Extras().previous_agent = agent->row.id;
  if (s->extras) s->extras->preempted_by.clear();  // placed: no longer what it waits after
  s->attempts.push_back(std::move(attempt));
  runs_.AddLiveAttempt(a);
  a->last_progress_ms = clock_->NowMs();
  if (!IsService(s)) ++task_starts_;
  SetStageStatus(s, IsService(s) ? v1::STAGE_STARTING : v1::STAGE_RUNNING, "");
  ArmAttemptTimers(a);

  v1::CoordinatorMessage msg;
  *msg.mutable_start() = std::move(start);
  SendToAgent(agent->row.id, msg);
  return OkStatus();
}

void Scheduler::ReleaseResources(AttemptState* a) {
  if (!a->holds_resources) return;
  a->holds_resources = false;
  UsageEnded(a);
  AgentState* agent = agents_.Find(a->row.agent_id);
  if (agent == nullptr) return;
  AddResources(&agent->free, a->held);
  for (int g : a->gpus) {
    if (g >= 0 && g < static_cast<int>(agent->gpu_busy.size())) agent->gpu_busy[g] = false;
    if (GpuOut(*agent, g)) GpuLeftService(agent, g);  // out of service: not free again
  }
  for (store::GpuSeriesRow& row : gpu_telemetry_.Finish(a->row.id)) {
    gpu_rows_.push_back(std::move(row));
  }
  agent->attempts.erase(a->row.id);
  dispatch_needed_ = true;
}

void Scheduler::SendToAgent(const std::string& agent_id, const v1::CoordinatorMessage& msg) {
  AgentState* agent = agents_.Find(agent_id);
  if (agent == nullptr || agent->session == 0) return;  // re-sent on reconnect
  batch_.outbox.emplace_back(agent->session, msg);
}

void Scheduler::StopAttempt(AttemptState* a, const std::string& kind, const std::string& detail) {
  if (a->kill_reason.empty()) {
    a->kill_reason = kind;
    a->kill_detail = detail;
    // Stored with the batch that sends the stop: after a restart it still ends as asked.
    a->row.stop_kind = kind;
    a->row.stop_reason = detail;
    a->row.stop_at_ms = clock_->NowMs();
    Touch(a);
  }
  v1::CoordinatorMessage msg;
  msg.mutable_cancel()->set_attempt_id(a->row.id);
  msg.mutable_cancel()->set_reason(a->kill_reason);
  msg.mutable_cancel()->set_grace_ms(a->stage ? a->stage->spec->grace_ms : 10'000);
  SendToAgent(a->row.agent_id, msg);
}

}  // namespace longhaul::scheduler
