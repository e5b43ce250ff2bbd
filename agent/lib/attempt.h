// The agent's state for one attempt it owns. Owned by the agent's event loop; no locking.
#pragma once

#include <sys/types.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "agent/lib/attempt_dir.h"
#include "agent/lib/attempt_runner.h"
#include "agent/lib/event_tailer.h"
#include "longhaul/v1/agent.pb.h"

namespace longhaul::agent {

struct Attempt {
  Attempt(boost::asio::io_context& io, int64_t attempt_id, AttemptDir attempt_dir)
      : id(attempt_id), dir(std::move(attempt_dir)), kill_timer(io), tailer(dir.events_path()) {}

  const int64_t id;
  const AttemptDir dir;

  // Process watching. `watched` is a pidfd on the shim, or on the stage itself when the shim
  // died before it (then `watching_stage`). `shim_is_child`: we launched it and must reap it.
  pid_t shim_pid = 0;
  bool shim_is_child = false;
  bool watching_stage = false;
  std::unique_ptr<boost::asio::posix::stream_descriptor> watched;
  std::optional<PidInfo> pid;        // from pid.json, once the stage runs
  std::optional<CancelInfo> cancel;  // requested; the exit reports its reason
  bool cancel_signalled = false;
  boost::asio::steady_timer kill_timer;  // SIGKILL after the grace, when there is no shim

  // A polled executor's attempt (Slurm; agent_polled_executor.cc). `native_id` is the job id, empty
  // until the submission answers (or, after a restart, until the job is found by name).
  std::string native_id;
  bool native_busy = false;     // a submission is in flight on the worker
  bool native_find = false;     // adopted without job_id: look for the job by name
  // The submission could not reach the scheduler (slurmctld down): submitted again, after a
  // look by name, at the next poll.
  std::optional<RunRequest> native_resubmit;
  NativeState native;           // as last heard
  std::string native_reported;  // "STATE|reason" last sent as AttemptQueued
  int64_t native_since_ms = 0;  // when the picture became ambiguous (native_outcome.h)

  // Events. Everything before (pos_offset, pos_seq) is acknowledged; acked_seq may be ahead
  // when the coordinator acknowledges what an earlier agent process sent.
  EventTailer tailer;
  int64_t pos_offset = 0;
  int64_t pos_seq = 0;
  int64_t acked_seq = 0;
  int64_t last_event_seq = 0;                         // highest non-blank line seen
  struct Sent {
    int64_t seq;
    int64_t end_offset;
    int64_t read_ms;  // when it was read from the file (the event lag metric)
  };
  std::deque<Sent> in_flight;                         // sent, not acknowledged, in seq order
  int64_t saved_hint_seq = 0;                         // pos_seq last written to acked.json
  bool read_to_end = false;  // after the exit: the whole file, last partial line too, was read
  int64_t rate_window_start_ms = 0;  // the rate limit's current one-second window
  int64_t rate_window_sent = 0;      // events sent in it
  bool rate_limited_logged = false;  // one log line per attempt when it is first held back

  // What it runs on, found when this agent process launched it (absent for an adopted one).
  std::optional<v1::AttemptEnvironment> environment;

  // Exit.
  std::optional<ExitInfo> exit;
  bool exit_sent = false;  // on the current stream

  // inotify watch descriptors (-1 when none).
  int wd_dir = -1;
  int wd_events = -1;

  bool running() const { return pid.has_value() && !exit.has_value(); }
};

}  // namespace longhaul::agent
