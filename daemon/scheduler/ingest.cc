// Stage events: stored once per (attempt, seq), then applied to the stage (progress and ETA,
// metrics, outputs, artifacts, checkpoints, messages). A malformed line (not JSON, not an
// event, a number out of range, not UTF-8) is stored and counted as a warning with its line
// number; it never fails the attempt.
#include "core/event.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {
namespace {

// The agent already replaces a line over 1 MiB (EventTailer::kMaxLineBytes); a peer that does
// not is held to the same limit here, so that one message cannot put 64 MiB into a row.
constexpr size_t kMaxEventLineBytes = 1 << 20;

// The row to store for `rec`, and the parsed event (an error: stored as "malformed").
Result<StageEvent> ParseRecord(const v1::EventRecord& rec, store::EventRow* row) {
  if (rec.line().size() > kMaxEventLineBytes) {
    std::string why = StrCat("an event line of ", rec.line().size(),
                             " bytes, over the limit of ", kMaxEventLineBytes, " bytes");
    *row = store::EventRow{rec.seq(), rec.ts_ms(), "malformed", StrCat("(dropped: ", why, ")")};
    return absl::InvalidArgumentError(why);
  }
  // A line the agent had to repair (bytes that are not UTF-8 became U+FFFD) is malformed even
  // when the repaired text parses: what the stage meant is lost.
  Result<StageEvent> parsed = rec.not_utf8()
                                  ? Result<StageEvent>(absl::InvalidArgumentError("not valid UTF-8"))
                                  : ParseEventLine(rec.line());
  *row = store::EventRow{rec.seq(), rec.ts_ms(),
                         parsed.ok() ? std::string(EventTypeName(parsed->type)) : "malformed",
                         rec.line()};
  return parsed;
}

std::string Resolve(const std::string& base, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return base + "/" + path;
}

}  // namespace

void Scheduler::HandleEvents(AgentState* agent, const v1::AttemptEvents& msg) {
  AttemptState* a = runs_.FindAnyAttempt(msg.attempt_id());
  int64_t max_seq = 0;
  if (a != nullptr && a->row.agent_id == agent->row.id) {
    for (const v1::EventRecord& rec : msg.events()) {
      store::EventRow row;
      Result<StageEvent> parsed = ParseRecord(rec, &row);
      Result<bool> inserted = store_->InsertEvent(a->row.id, row);
      if (!inserted.ok()) {
        // Not acknowledged: the agent keeps the events and sends them again.
        GetLogger("scheduler")->error("attempt {}: storing events: {}", a->row.id,
                                      ToStd(inserted.status().message()));
        return;
      }
      max_seq = std::max(max_seq, rec.seq());
      if (!*inserted) continue;  // a re-send of an event already stored
      if (metrics_ != nullptr) metrics_->events_ingested++;
      if (!parsed.ok()) {
        a->row.malformed++;
        a->row.last_malformed =
            StrCat("line ", rec.seq(), ": ", ToStd(parsed.status().message()));
        Touch(a);
        // The first one of an attempt is worth a warning; a stage that writes thousands must
        // not flood the log.
        GetLogger("scheduler")
            ->log(a->row.malformed == 1 ? spdlog::level::warn : spdlog::level::debug,
                  "attempt {}: malformed event, events.jsonl {} (stored, not applied{})", a->row.id,
                  a->row.last_malformed,
                  a->row.malformed == 1 ? "; more are logged at debug level" : "");
        if (a->stage && a->stage->current == a) {
          a->stage->row.malformed++;
          a->stage->row.last_malformed = a->row.last_malformed;
          MarkChanged(a->stage);
        }
        continue;
      }
      if (a->stage && a->stage->current == a) ApplyEvent(a, *parsed, rec.ts_ms());
    }
    if (max_seq > a->row.events) {
      a->row.events = max_seq;
      Touch(a);
    }
  } else if (a != nullptr || !StoreEventsOfEndedRun(agent, msg, &max_seq)) {
    for (const v1::EventRecord& rec : msg.events()) max_seq = std::max(max_seq, rec.seq());
    GetLogger("scheduler")->debug("events for unknown attempt {} from {} dropped",
                                  msg.attempt_id(), agent->row.id);
  }
  if (max_seq < 0) return;  // a store error: not acknowledged, the agent sends them again
  if (max_seq > 0) {
    v1::CoordinatorMessage ack;
    ack.mutable_ack_events()->set_attempt_id(msg.attempt_id());
    ack.mutable_ack_events()->set_up_to_seq(max_seq);
    SendToAgent(agent->row.id, ack);
  }
}

bool Scheduler::StoreEventsOfEndedRun(AgentState* agent, const v1::AttemptEvents& msg,
                                      int64_t* max_seq) {
  auto log = GetLogger("scheduler");
  Result<store::AttemptRow> row = store_->LoadAttemptById(msg.attempt_id());
  if (!row.ok()) {
    if (absl::IsNotFound(row.status())) return false;
    log->error("attempt {}: loading it to store its events: {}", msg.attempt_id(),
               ToStd(row.status().message()));
    *max_seq = -1;
    return true;
  }
  if (row->agent_id != agent->row.id) return false;
  bool changed = false;
  for (const v1::EventRecord& rec : msg.events()) {
    store::EventRow ev;
    Result<StageEvent> parsed = ParseRecord(rec, &ev);
    Result<bool> inserted = store_->InsertEvent(row->id, ev);
    if (!inserted.ok()) {
      log->error("attempt {}: storing events: {}", row->id, ToStd(inserted.status().message()));
      *max_seq = -1;
      return true;
    }
    *max_seq = std::max(*max_seq, rec.seq());
    if (*inserted && !parsed.ok()) {
      row->malformed++;
      row->last_malformed = StrCat("line ", rec.seq(), ": ", ToStd(parsed.status().message()));
      changed = true;
    }
  }
  if (*max_seq > row->events) {
    row->events = *max_seq;
    changed = true;
  }
  if (changed) {
    if (Status st = store_->UpdateAttempt(*row); !st.ok()) {
      log->error("attempt {}: {}", row->id, ToStd(st.message()));
      *max_seq = -1;
    }
  }
  return true;
}

void Scheduler::ApplyEvent(AttemptState* a, const StageEvent& ev, int64_t ts_ms) {
  StageState* s = a->stage;
  int64_t now = clock_->NowMs();
  switch (ev.type) {
    case EventType::kProgress: {
      store::ProgressRow p = s->row.progress.value_or(store::ProgressRow{});
      p.done = ev.done;
      if (ev.total) p.total = *ev.total;
      if (!ev.unit.empty()) p.unit = ev.unit;
      // The agent's clock: events re-sent in a burst after a reconnect keep their spacing.
      std::optional<RateEstimator>& rate = s->Extras().rate;
      if (!rate) rate.emplace(options_.rate_tau_ms);
      rate->Observe(ev.done, ts_ms > 0 ? ts_ms : now);
      p.rate = rate->rate();
      p.eta_seconds = rate->EtaSeconds(p.done, p.total).value_or(-1);
      p.updated_at_ms = now;
      s->row.progress = p;
      a->last_progress_ms = now;
      break;
    }
    case EventType::kMetric: {
      if (s->spec->early_stop != nullptr && ev.step) {
        JudgeEarlyStop(a, ev.name, *ev.step, ev.value);
      }
      store::MetricRow m{s->row.id, a->row.id, a->row.number, ev.name, ev.value, ev.step, now};
      Status st = store_->InsertMetric(m);
      if (!st.ok()) GetLogger("scheduler")->error("storing metric: {}", ToStd(st.message()));
      v1::Metric& latest = s->Extras().latest_metrics[ev.name];
      latest.set_name(ev.name);
      latest.set_value(ev.value);
      latest.set_step(ev.step.value_or(-1));
      latest.set_attempt(a->row.number);
      latest.set_ts_ms(now);
      break;
    }
    case EventType::kOutput:
      s->row.outputs[ev.name] = ev.text;
      break;
    case EventType::kArtifact: {
      store::ArtifactRow art{s->row.id, a->row.id,       a->row.number, ev.name,
                             Resolve(a->row.output_dir, ev.path), ev.bytes, a->row.agent_id, now};
      Status st = store_->InsertArtifact(art);
      if (!st.ok()) GetLogger("scheduler")->error("storing artifact: {}", ToStd(st.message()));
      break;
    }
    case EventType::kCheckpoint:
      s->row.checkpoint = Resolve(a->row.output_dir, ev.path);
      s->row.checkpoint_step = ev.step;
      a->checkpoint_at_ms = now;
      NoticedCheckpoint(a);  // asked to checkpoint before a stop: stopped now
      break;
    case EventType::kReady:
      if (IsService(s) && s->row.status == v1::STAGE_STARTING) {
        SetStageStatus(s, v1::STAGE_SERVING, "");
        Propagate(s);  // its dependents may run now
      }
      break;
    case EventType::kMessage:
      s->row.last_message = ev.text;
      s->row.last_message_level = ev.level;
      break;
    case EventType::kGpuFault:
      s->row.last_message = StrCat("gpu fault: ", ev.text);
      s->row.last_message_level = "error";
      OnStageGpuFault(a, ev);
      break;
  }
  MarkChanged(s);
}

}  // namespace longhaul::scheduler
