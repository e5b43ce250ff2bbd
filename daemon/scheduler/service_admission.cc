// Services and their consumers (docs/architecture.md, "Services and their consumers"): a
// service starts only together with room for one of its consumers, which stays reserved until
// that consumer starts; the backstop that stops a service when nothing else can move.
#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/resources.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {
namespace {

bool ServiceIsUp(v1::StageStatus st) {
  return st == v1::STAGE_STARTING || st == v1::STAGE_SERVING || st == v1::STAGE_RUNNING;
}

// Larger first: GPUs, then memory, then CPUs.
bool LargerNeed(const v1::Resources& a, const v1::Resources& b) {
  return std::make_tuple(a.gpus(), a.memory_bytes(), a.cpus()) >
         std::make_tuple(b.gpus(), b.memory_bytes(), b.cpus());
}

std::string NeedText(const v1::Resources& r) {
  std::string out = StrCat(r.cpus(), " cpus");
  if (r.memory_bytes() > 0) out += StrCat(", ", r.memory_bytes() >> 20, " MiB");
  if (r.gpus() > 0) out += StrCat(", ", r.gpus(), " GPUs");
  return out;
}

}  // namespace

bool Scheduler::AdmitService(StageState* s) {
  RunState* run = s->run;
  // One that was stopped to free room waits until some task has started since, or nothing
  // runs at all and no ready task waits: it must not take back the room it was stopped for.
  if (auto y = yielded_.find({run->row.id, s->index}); y != yielded_.end()) {
    if (y->second == task_starts_ && (tasks_wait_ || !runs_.live_attempts().empty())) return false;
    yielded_.erase(y);
  }
  Unhold(s);  // a service that is itself a consumer may use what was held for it
  // The consumers it may start for: those that must really run (their tasks are done) and
  // whose services, but for those already up, are all ready to start now.
  std::vector<StageState*> consumers;
  for (int d : s->dependents) {
    StageState* c = run->stages[d].get();
    if (c->row.status != v1::STAGE_WAITING && c->row.status != v1::STAGE_READY) continue;
    if (c->row.next_retry_at_ms || holds_.count({run->row.id, c->index})) continue;
    bool ok = true;
    for (int x : c->deps) {
      const StageState* dep = run->stages[x].get();
      v1::StageStatus st = dep->row.status;
      if (IsService(dep)) {
        ok = ok && (ServiceIsUp(st) || st == v1::STAGE_READY);
      } else {
        ok = ok && (st == v1::STAGE_SUCCEEDED || st == v1::STAGE_CACHED);
      }
    }
    if (ok) consumers.push_back(c);
  }
  std::stable_sort(consumers.begin(), consumers.end(),
                   [](const StageState* a, const StageState* b) {
                     return LargerNeed(a->row.resources, b->row.resources);
                   });
  for (StageState* c : consumers) {
    // Its services that are not up yet, placed on what is free (every way, within a bound),
    // then it beside them; started for real only when all of them found room.
    std::vector<StageState*> todo;
    for (int x : c->deps) {
      StageState* svc = run->stages[x].get();
      if (!IsService(svc) || ServiceIsUp(svc->row.status)) continue;
      if (svc != s) Unhold(svc);
      todo.push_back(svc);
    }
    std::vector<std::pair<StageState*, AgentState*>> placed;
    AgentState* room = nullptr;
    int budget = 10'000;
    std::function<bool(size_t)> place = [&](size_t i) -> bool {
      if (i == todo.size()) {
        room = PickAgent(c);
        return room != nullptr;
      }
      StageState* svc = todo[i];
      for (auto& [id, a] : agents_) {
        if (--budget < 0) return false;
        if (!Fits(a->free, svc->row.resources) || !MayGoTo(svc, *a) || DrainKeepsOff(svc, *a) ||
            ReservationKeepsOff(svc, *a)) {
          continue;
        }
        SubtractResources(&a->free, svc->row.resources);
        placed.emplace_back(svc, a.get());
        bool ok = place(i + 1);
        AddResources(&a->free, svc->row.resources);
        if (ok) return true;
        placed.pop_back();
      }
      return false;
    };
    if (!place(0)) {
      for (StageState* svc : todo) {
        if (svc != s) Rehold(svc);
      }
      continue;
    }
    ConsumerHold hold;
    hold.agent_id = room->row.id;
    hold.need = c->row.resources;
    for (auto& [svc, a] : placed) {
      hold.services.push_back(svc->index);
      Status st = StartAttemptOn(svc, a);
      if (!st.ok()) {
        GetLogger("scheduler")
            ->warn("run {} stage {}: {}", run->row.id, svc->row.name, ToStd(st.message()));
      }
    }
    // Started or failed to start, the services are no longer ready; the hold stands only
    // while one of them is up.
    bool any_up = false;
    for (int x : hold.services) any_up = any_up || ServiceIsUp(run->stages[x]->row.status);
    if (any_up) {
      ConsumerHold& h = holds_[{run->row.id, c->index}] = std::move(hold);
      h.applied = MinResources(room->free, h.need);
      SubtractResources(&room->free, h.applied);
    }
    return true;
  }
  Rehold(s);
  return false;
}

void Scheduler::ApplyHolds() {
  for (auto& [key, h] : holds_) {
    AgentState* agent = agents_.Find(h.agent_id);
    h.applied = v1::Resources();
    if (agent == nullptr || agent->session == 0) continue;
    h.applied = MinResources(agent->free, h.need);
    SubtractResources(&agent->free, h.applied);
  }
}

void Scheduler::UnapplyHolds() {
  for (auto& [key, h] : holds_) {
    if (AgentState* agent = agents_.Find(h.agent_id)) AddResources(&agent->free, h.applied);
    h.applied = v1::Resources();
  }
}

bool Scheduler::Unhold(const StageState* consumer) {
  auto it = holds_.find({consumer->run->row.id, consumer->index});
  if (it == holds_.end()) return false;
  AgentState* agent = agents_.Find(it->second.agent_id);
  if (agent != nullptr) AddResources(&agent->free, it->second.applied);
  it->second.applied = v1::Resources();
  return true;
}

void Scheduler::Rehold(const StageState* consumer) {
  auto it = holds_.find({consumer->run->row.id, consumer->index});
  if (it == holds_.end()) return;
  AgentState* agent = agents_.Find(it->second.agent_id);
  if (agent == nullptr || agent->session == 0) return;
  it->second.applied = MinResources(agent->free, it->second.need);
  SubtractResources(&agent->free, it->second.applied);
}

void Scheduler::DropHolds(const StageState* s, v1::StageStatus status) {
  if (holds_.empty()) return;
  int64_t run_id = s->run->row.id;
  auto drop = [this](auto it) {
    AgentState* agent = agents_.Find(it->second.agent_id);
    if (agent != nullptr) AddResources(&agent->free, it->second.applied);
    return holds_.erase(it);
  };
  if (status != v1::STAGE_WAITING && status != v1::STAGE_READY) {
    auto it = holds_.find({run_id, s->index});
    if (it != holds_.end()) drop(it);
  }
  if (!IsService(s) || ServiceIsUp(status)) return;
  // A service that went down: the holds made for it stand while another of theirs is up.
  for (auto it = holds_.lower_bound({run_id, 0});
       it != holds_.end() && it->first.first == run_id;) {
    const std::vector<int>& svcs = it->second.services;
    bool mine = std::find(svcs.begin(), svcs.end(), s->index) != svcs.end();
    bool other_up = false;
    for (int x : svcs) {
      if (x != s->index && ServiceIsUp(s->run->stages[x]->row.status)) other_up = true;
    }
    it = mine && !other_up ? drop(it) : std::next(it);
  }
}

bool Scheduler::ConsumesLiveService(const StageState* s) const {
  for (int d : s->deps) {
    const StageState* dep = s->run->stages[d].get();
    if (IsService(dep) && ServiceIsUp(dep->row.status)) return true;
  }
  return false;
}

std::vector<const StageState*> Scheduler::ServicesHolding(const StageState* s,
                                                          std::string* agent_id) const {
  for (const auto& [id, agent] : agents_) {
    if (!MayGoTo(s, *agent) || !Fits(agent->row.resources, s->row.resources)) continue;
    v1::Resources would = agent->free;
    std::vector<const StageState*> by;
    for (int64_t attempt_id : agent->attempts) {
      const AttemptState* live = runs_.FindAttempt(attempt_id);
      if (live == nullptr || live->stage == nullptr) continue;
      const StageState* svc = live->stage;
      if (!IsService(svc) || svc->current != live) continue;
      bool consumer_running = false;
      for (int d : svc->dependents) {
        if (svc->run->stages[d]->current != nullptr) consumer_running = true;
      }
      if (consumer_running) continue;
      AddResources(&would, live->held);
      by.push_back(svc);
    }
    if (by.empty() || !Fits(would, s->row.resources)) continue;
    if (agent_id != nullptr) *agent_id = id;
    return by;
  }
  return {};
}

std::string Scheduler::HeldByServices(const StageState* s) const {
  std::string id;
  std::vector<const StageState*> by = ServicesHolding(s, &id);
  if (by.empty()) return "";
  {
    std::vector<std::string> names;
    bool waits_for_it = false;
    for (const StageState* svc : by) {
      names.push_back(svc->run == s->run
                          ? StrCat("'", svc->row.name, "'")
                          : StrCat("run ", svc->run->row.id, " '", svc->row.name, "'"));
      if (std::find(s->deps.begin(), s->deps.end(), svc->index) != s->deps.end() &&
          svc->run == s->run) {
        waits_for_it = true;
      }
    }
    bool one = by.size() == 1;
    return StrCat(
        " (on ", id, " the room is held by service", one ? " " : "s ", StrJoin(names, ", "),
        waits_for_it
            ? (one ? ", which waits for it" : ", which wait for it")
            : (one ? ", which waits for its consumers" : ", which wait for their consumers"),
        ")");
  }
}

void Scheduler::BreakServiceWait() {
  if (!service_check_needed_) return;
  service_check_needed_ = false;
  if (ready_.empty()) return;
  // Something else will move when a task runs or a service is on its way up or down.
  for (const auto& [id, a] : runs_.live_attempts()) {
    const StageState* st = a->stage;
    if (st == nullptr || st->current != a) continue;
    if (!IsService(st) || st->row.status != v1::STAGE_SERVING || !a->kill_reason.empty()) {
      return;
    }
  }
  // Stopping one helps only if a ready stage waits for room that it holds, or, for a ready
  // service, if it is up beside that service for a consumer of both (they are placed anew
  // together once it is down).
  std::set<const StageState*> helpful;
  for (const auto& [run_id, run] : runs_) {
    if (run->status_count[v1::STAGE_READY] == 0) continue;
    for (const auto& st : run->stages) {
      if (st->row.status != v1::STAGE_READY) continue;
      for (const StageState* svc : ServicesHolding(st.get(), nullptr)) helpful.insert(svc);
      if (!IsService(st.get())) continue;
      // A ready service starts only with room for a consumer too (AdmitService): a serving
      // service that holds the room such a consumer lacks helps as well.
      for (int c : st->dependents) {
        const StageState* consumer = run->stages[c].get();
        if (consumer->current != nullptr || consumer->row.status == v1::STAGE_SUCCEEDED) continue;
        for (const StageState* svc : ServicesHolding(consumer, nullptr)) {
          if (svc != st.get()) helpful.insert(svc);
        }
      }
      for (int c : st->dependents) {
        for (int d : run->stages[c]->deps) {
          const StageState* other = run->stages[d].get();
          if (IsService(other) && other->row.status == v1::STAGE_SERVING) helpful.insert(other);
        }
      }
    }
  }
  AttemptState* victim = nullptr;
  for (const auto& [id, a] : runs_.live_attempts()) {
    const StageState* st = a->stage;
    if (st == nullptr || st->current != a || helpful.count(st) == 0) continue;
    bool consumer_running = false;
    for (int d : st->dependents) {
      if (st->run->stages[d]->current != nullptr) consumer_running = true;
    }
    if (consumer_running) continue;
    if (victim == nullptr || LargerNeed(a->held, victim->held) ||
        (!LargerNeed(victim->held, a->held) && a->row.id < victim->row.id)) {
      victim = a;
    }
  }
  if (victim == nullptr) return;
  StageState* svc = victim->stage;
  std::string why = StrCat(
      "every ready stage waits for room that serving services hold, and no "
      "task runs; it frees ",
      NeedText(victim->held), " on ", victim->row.agent_id,
      " and starts again when a consumer can run beside it (no retry spent)");
  GetLogger("scheduler")
      ->warn("run {} service {}: stopped: {}", svc->run->row.id, svc->row.name, why);
  StopAttempt(victim, "yielded", why);
  yielded_[{svc->run->row.id, svc->index}] = task_starts_;
  // Its consumers may not start while it goes down.
  for (int d : svc->dependents) {
    StageState* c = svc->run->stages[d].get();
    if (c->row.status == v1::STAGE_READY) {
      SetStageStatus(c, v1::STAGE_WAITING,
                     StrCat("service '", svc->row.name,
                            "' is stopping to free room; it starts "
                            "again with room for a consumer"));
    }
  }
}

}  // namespace longhaul::scheduler
