// Agent: events from events.jsonl to the coordinator, under a window of unacknowledged
// events, and the exit report that follows them.
#include "agent/lib/agent.h"
#include "core/strings.h"
#include "core/utf8.h"

namespace longhaul::agent {

void Agent::Pump(Attempt& a) {
  if (gen_ == 0 || shut_down_) return;
  while (in_flight_ < config_.event_window && !a.read_to_end) {
    bool final = a.exit.has_value();  // the stage has ended: a last line without '\n' counts
    size_t room = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(config_.batch_lines),
                                                        config_.event_window - in_flight_));
    int64_t now = clock_->NowMs();
    room = std::min(room, RateRoom(a, now));
    if (room == 0) break;
    auto batch = a.tailer.Read(room, config_.batch_bytes, final);
    if (batch.ok()) metrics_.events_read.fetch_add(batch->lines.size(), std::memory_order_relaxed);
    if (!batch.ok()) {
      log_->error("attempt {}: {}", a.id, ToStd(batch.status().message()));
      // An unreadable events file must not hold back the exit report forever.
      if (final) a.read_to_end = true;
      break;
    }
    v1::AgentMessage m;
    v1::AttemptEvents* events = m.mutable_events();
    events->set_attempt_id(a.id);
    for (EventLine& line : batch->lines) {
      a.last_event_seq = std::max(a.last_event_seq, line.seq);
      if (line.seq <= a.acked_seq) {
        // Acknowledged already (sent by an earlier agent process).
        a.pos_offset = line.end_offset;
        a.pos_seq = line.seq;
        continue;
      }
      v1::EventRecord* r = events->add_events();
      r->set_seq(line.seq);
      r->set_ts_ms(now);
      // A proto3 string must be UTF-8 (agent/lib/utf8_repair.h): bad bytes become U+FFFD
      // and the coordinator counts the line as malformed.
      if (IsValidUtf8(line.text)) {
        r->set_line(std::move(line.text));
      } else {
        r->set_line(ToValidUtf8(line.text));
        r->set_not_utf8(true);
      }
      a.in_flight.push_back({line.seq, line.end_offset, now});
    }
    if (events->events_size() > 0) {
      in_flight_ += events->events_size();
      metrics_.events_sent.fetch_add(events->events_size(), std::memory_order_relaxed);
      if (now - a.rate_window_start_ms >= 1000 || now < a.rate_window_start_ms) {
        a.rate_window_start_ms = now;
        a.rate_window_sent = 0;
      }
      a.rate_window_sent += events->events_size();
      Send(std::move(m));
    }
    if (batch->at_end) {
      if (final) a.read_to_end = true;
      break;
    }
  }
  if (a.exit && a.read_to_end && !a.exit_sent) {
    v1::AgentMessage m;
    v1::AttemptExited* x = m.mutable_exited();
    x->set_attempt_id(a.id);
    x->set_exit_code(a.exit->exit_code);
    x->set_signal(a.exit->signal);
    x->set_reason(a.exit->reason);
    x->set_ended_at_ms(a.exit->ended_at_ms);
    x->set_last_seq(a.last_event_seq);
    x->set_start_failed(a.exit->start_failed);
    x->set_failure_kind(a.exit->failure_kind);
    x->set_node(a.exit->node);
    x->set_leftovers_killed(a.exit->leftovers_killed);
    Send(std::move(m));
    a.exit_sent = true;
  }
}

size_t Agent::RateRoom(Attempt& a, int64_t now_ms) {
  if (config_.max_event_rate <= 0) return SIZE_MAX;
  // A window opens with the first events sent in it (CountSent), so its second is theirs.
  bool window_over = now_ms - a.rate_window_start_ms >= 1000 || now_ms < a.rate_window_start_ms;
  int64_t left = config_.max_event_rate - (window_over ? 0 : a.rate_window_sent);
  if (left > 0) return static_cast<size_t>(left);
  if (!a.rate_limited_logged) {
    a.rate_limited_logged = true;
    log_->info(
        "attempt {}: writes events faster than {}/s; the rest wait in its events file "
        "and follow at that rate (--max-event-rate)",
        a.id, config_.max_event_rate);
  }
  if (!rate_timer_armed_ && !shut_down_) {
    rate_timer_armed_ = true;
    int64_t wait_ms = std::max<int64_t>(1, a.rate_window_start_ms + 1000 - now_ms);
    rate_timer_.expires_after(std::chrono::milliseconds(wait_ms));
    rate_timer_.async_wait([this](const boost::system::error_code& ec) {
      rate_timer_armed_ = false;
      if (!ec) PumpAll();
    });
  }
  return 0;
}

void Agent::PumpAll() {
  std::vector<int64_t> ids;
  for (const auto& [id, a] : attempts_) ids.push_back(id);
  for (int64_t id : ids) {
    if (in_flight_ >= config_.event_window) return;
    if (Attempt* a = Find(id)) Pump(*a);
  }
}

void Agent::HandleAckEvents(const v1::AckEvents& ack) {
  Attempt* a = Find(ack.attempt_id());
  if (a == nullptr || ack.up_to_seq() <= a->acked_seq) return;
  bool window_was_full = in_flight_ >= config_.event_window;
  a->acked_seq = ack.up_to_seq();
  uint64_t acked = 0;
  while (!a->in_flight.empty() && a->in_flight.front().seq <= a->acked_seq) {
    a->pos_seq = a->in_flight.front().seq;
    a->pos_offset = a->in_flight.front().end_offset;
    a->in_flight.pop_front();
    --in_flight_;
    ++acked;
  }
  metrics_.events_acked.fetch_add(acked, std::memory_order_relaxed);
  SaveHint(*a);
  if (window_was_full) PumpAll();
}

void Agent::RewindAll() {
  in_flight_ = 0;
  for (auto& [id, a] : attempts_) {
    a->in_flight.clear();
    a->tailer.Rewind(a->pos_offset, a->pos_seq);
    a->read_to_end = false;
    a->exit_sent = false;
  }
}

void Agent::SaveHint(Attempt& a) {
  if (a.pos_seq == a.saved_hint_seq) return;
  if (Status s = a.dir.WriteAckHint(AckHint{a.pos_seq, a.pos_offset}); !s.ok()) {
    if (!NoteWriteFailure(s)) log_->warn("attempt {}: {}", a.id, ToStd(s.message()));
    return;
  }
  a.saved_hint_seq = a.pos_seq;
}

}  // namespace longhaul::agent
