// Agent: attempts of a polled executor (Slurm): submitting, polling their states in one batch
// (15 s after a submit or a change, backing off to 2 min while nothing changes), cancelling,
// re-adopting (docs/slurm.md). The runner's commands run on the worker thread; their answers
// come back to the event loop.
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>

#include "agent/lib/agent_executors.h"
#include "agent/lib/native_outcome.h"
#include "agent/lib/readoption.h"
#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {

void Agent::PolledExecutor::Start(Attempt& a, const v1::StartAttempt& /*spec*/, RunRequest req,
                                  const std::function<void()>& write_spec,
                                  const std::function<void(const Status&)>& /*fail*/) {
  write_spec();
  Submit(a, std::move(req));  // a submit that fails is recorded when it answers
}

void Agent::PolledExecutor::Adopt(int64_t id, const AttemptDir& dir, bool even_if_done) {
  if (!even_if_done && dir.IsDone()) return;
  AdoptJob(id, dir);
}

void Agent::PolledExecutor::OnHeartbeat(const std::vector<int64_t>& /*ids*/) {
  Poll();  // one status query for every attempt
}

void Agent::PolledExecutor::OnExitFile(Attempt& a) {
  // The stage's own end needs nothing more; an end by someone else needs Slurm's word, asked
  // at the next heartbeat (one query for all such ends, not one per file event).
  int64_t id = a.id;
  if (!a.exit && !a.native_id.empty()) Check(a, nullptr);
  if (Attempt* b = agent_.Find(id); b != nullptr && !b->exit) poll_at_ms_ = 0;
}

void Agent::PolledExecutor::Submit(Attempt& a, RunRequest req) {
  a.native_busy = true;
  AttemptRunner* runner = agent_.runner_;
  // Again after an answer that never came (slurmctld down): the first sbatch may have
  // submitted all the same, so look first. A cancelled attempt is not submitted again.
  const bool again = a.native_resubmit.has_value();
  const bool cancelled = a.cancel.has_value();
  a.native_resubmit.reset();
  agent_.OnWorker<Result<Started>>(
      [runner, req, again, cancelled]() -> Result<Started> {
        // Found by name: recorded as if sbatch had answered.
        auto find = [&]() -> Result<Started> {
          auto found = runner->Find(req.attempt_id, req.attempt_dir);
          if (!found.ok()) return found.status();
          RETURN_IF_ERROR(WriteFileAtomic(req.attempt_dir + "/job_id", *found + "\n"));
          return Started{*found, 0};
        };
        if (again) {
          auto found = find();
          if (!absl::IsNotFound(found.status())) return found;
          if (cancelled) return absl::CancelledError("cancelled before it was submitted");
        }
        auto started = runner->Start(req);
        if (!absl::IsDeadlineExceeded(started.status())) return started;
        // sbatch did not answer in time: it may have submitted all the same. Look before
        // submitting again, so that one attempt is never two jobs.
        auto found = find();
        if (!absl::IsNotFound(found.status())) return found;
        return runner->Start(req);
      },
      [this, id = a.id, req](Result<Started> started) {
        OnSubmitted(id, req, std::move(started));
      });
}

void Agent::PolledExecutor::OnSubmitted(int64_t id, const RunRequest& req, Result<Started> started) {
  Attempt* a = agent_.Find(id);
  if (a == nullptr) return;
  a->native_busy = false;
  if (!started.ok() &&
      (absl::IsUnavailable(started.status()) || absl::IsDeadlineExceeded(started.status()))) {
    // Slurm could not be reached, or did not answer: the state is unknown, not failed.
    agent_.log_->warn("attempt {}: {} unreachable, trying again at the next poll: {}", id,
               agent_.runner_->executor(), ToStd(started.status().message()));
    a->native_resubmit = req;
    ReportQueued(*a, "UNSUBMITTED", StrCat(agent_.runner_->executor(), " unreachable, trying again"));
    return;
  }
  if (!started.ok()) {
    std::string why =
        StrCat("cannot submit to ", agent_.runner_->executor(), ": ", ToStd(started.status().message()));
    agent_.log_->error("attempt {}: {}", id, why);
    agent_.RecordExit(*a, StartFailure(a->cancel ? a->cancel->reason : why, agent_.clock_->NowMs()), true);
    agent_.Pump(*a);
    return;
  }
  a->native_id = started->native_id;
  agent_.log_->info("attempt {}: submitted as {} job {}", id, agent_.runner_->executor(), a->native_id);
  // Its first status query comes at most one short wait later.
  submitted_ = true;
  poll_at_ms_ = std::min(poll_at_ms_, agent_.clock_->NowMs() + agent_.config_.native_poll_ms);
  if (a->cancel) CancelJob(*a);
}

void Agent::PolledExecutor::AdoptJob(int64_t id, const AttemptDir& dir) {
  Attempt& a = agent_.AddAdopted(id, dir);
  if (auto pid = dir.ReadPid(); pid.ok()) a.pid = *pid;
  auto job = dir.ReadJobId();
  auto exit = dir.ReadExit();
  if (job.ok()) {
    a.native_id = *job;
    agent_.log_->info("attempt {}: found in the state dir: {} job {}", id, agent_.runner_->executor(), *job);
  } else if (exit.ok()) {
    agent_.log_->info("attempt {}: found in the state dir: ended, no job id", id);
    agent_.RecordExit(a, *exit, /*write_file=*/false);
  } else if (::access(dir.File("job.sh").c_str(), F_OK) == 0) {
    // The agent stopped between writing the script and recording sbatch's answer: the job
    // may exist. The next poll looks for it by name; it is never submitted twice.
    agent_.log_->info("attempt {}: found in the state dir: submitted or not; looking for job {}", id,
               "lh-" + std::to_string(id));
    a.native_find = true;
  } else {
    agent_.RecordExit(a, UnknownExit(kNeverStartedReason, agent_.clock_->NowMs(), /*start_failed=*/true),
               /*write_file=*/true);
  }
  agent_.Pump(a);
}

void Agent::PolledExecutor::Poll() {
  if (agent_.shut_down_) return;
  for (auto& [id, a] : agent_.attempts_) {
    if (a->native_resubmit && !a->native_busy && !a->exit) Submit(*a, *a->native_resubmit);
  }
  // Files first, at every heartbeat: on a shared file system inotify does not see what other
  // nodes write, so pid.json and exit.json are looked for here too. An exit.json decides a
  // stage's own end without Slurm; one that may need Slurm's word (the stage was killed by
  // something other than longhaul) makes the status query due.
  bool due = agent_.clock_->NowMs() >= poll_at_ms_;
  std::vector<int64_t> ended;
  for (auto& [id, a] : agent_.attempts_) {
    if (a->exit) continue;
    if (!a->pid) agent_.CheckPidFile(*a);
    if (a->native_find) due = true;
    if (!a->native_id.empty() && ::access(a->dir.File("exit.json").c_str(), F_OK) == 0)
      ended.push_back(id);
  }
  for (int64_t id : ended) {
    if (Attempt* a = agent_.Find(id); a != nullptr && !a->exit) Check(*a, nullptr);
    if (Attempt* a = agent_.Find(id); a != nullptr && !a->exit) due = true;
  }
  for (auto& [id, a] : agent_.attempts_) agent_.Pump(*a);
  if (poll_in_flight_ || !due) return;
  std::vector<std::string> ids;
  std::vector<std::pair<int64_t, std::string>> to_find;  // attempt id, dir
  for (const auto& [id, a] : agent_.attempts_) {
    if (a->exit) continue;
    if (!a->native_id.empty()) ids.push_back(a->native_id);
    if (a->native_find) to_find.emplace_back(id, a->dir.path());
  }
  if (ids.empty() && to_find.empty()) return;
  poll_in_flight_ = true;
  using Answer =
      std::pair<Result<std::map<std::string, NativeState>>, std::map<int64_t, Result<std::string>>>;
  AttemptRunner* runner = agent_.runner_;
  agent_.OnPool<Answer>(
      agent_.query_worker_, [runner, ids = std::move(ids), to_find = std::move(to_find)]() -> Answer {
        std::map<int64_t, Result<std::string>> found;
        for (const auto& [id, dir] : to_find) found.emplace(id, runner->Find(id, dir));
        return {runner->Reconcile(ids), std::move(found)};
      },
      [this](Answer answer) { OnStates(std::move(answer.first), std::move(answer.second)); });
}

void Agent::PolledExecutor::OnStates(Result<std::map<std::string, NativeState>> states,
                           std::map<int64_t, Result<std::string>> found) {
  poll_in_flight_ = false;
  if (!states.ok()) {
    agent_.log_->warn("{} status unknown this time: {}", agent_.runner_->executor(),
               ToStd(states.status().message()));
  }
  // The next query: soon after a submit or a change, later and later while nothing changes
  // (or while the executor does not answer).
  bool changed = submitted_;
  submitted_ = false;
  if (states.ok()) {
    for (const auto& [id, a] : agent_.attempts_) {
      if (a->exit || a->native_id.empty()) continue;
      auto it = states->find(a->native_id);
      if (it == states->end()) continue;
      const NativeState& s = it->second;
      if (s.phase != a->native.phase || s.state != a->native.state || s.reason != a->native.reason)
        changed = true;
    }
  }
  poll_every_ms_ = changed || poll_every_ms_ == 0
                              ? agent_.config_.native_poll_ms
                              : std::min(agent_.config_.native_poll_max_ms, poll_every_ms_ * 2);
  poll_at_ms_ = agent_.clock_->NowMs() + poll_every_ms_;
  for (auto& [id, job] : found) {
    Attempt* a = agent_.Find(id);
    if (a == nullptr || !a->native_find) continue;
    if (job.ok()) {
      a->native_find = false;
      a->native_id = *job;
      if (Status s = WriteFileAtomic(a->dir.File("job_id"), *job + "\n"); !s.ok())
        agent_.log_->warn("attempt {}: {}", id, ToStd(s.message()));
      agent_.log_->info("attempt {}: found {} job {}", id, agent_.runner_->executor(), *job);
    } else if (absl::IsNotFound(job.status())) {
      a->native_find = false;
      agent_.RecordExit(*a, UnknownExit(kNeverStartedReason, agent_.clock_->NowMs(), true), true);
      agent_.Pump(*a);
    }  // else unknown: ask again at the next poll
  }
  std::vector<int64_t> ids;
  for (const auto& [id, a] : agent_.attempts_) ids.push_back(id);
  for (int64_t id : ids) {
    Attempt* a = agent_.Find(id);
    if (a == nullptr || a->exit || a->native_id.empty()) continue;
    const NativeState* st = nullptr;
    if (states.ok()) {
      auto it = states->find(a->native_id);
      if (it != states->end()) st = &it->second;
    }
    Check(*a, st);
  }
}

void Agent::PolledExecutor::Check(Attempt& a, const NativeState* state) {
  agent_.CheckPidFile(a);  // AttemptStarted, once the shim has written pid.json
  if (state != nullptr && state->phase != NativePhase::kUnknown) a.native = *state;
  if (a.native.phase == NativePhase::kPending && !a.pid) {
    ReportQueued(a, a.native.state, a.native.reason);
  }
  auto shim_exit = a.dir.ReadExit();
  bool over = a.native.phase == NativePhase::kEnded || a.native.phase == NativePhase::kGone;
  int64_t now = agent_.clock_->NowMs();
  if (shim_exit.ok() || over) {
    if (a.native_since_ms == 0) a.native_since_ms = now;
  } else {
    a.native_since_ms = 0;
  }
  NativeOutcomeInput in;
  in.native_id = a.native_id;
  in.state = a.native;
  if (shim_exit.ok()) in.shim_exit = *shim_exit;
  in.cancel = a.cancel;
  in.stage_started = a.pid.has_value();
  in.ambiguous_for_ms = a.native_since_ms == 0 ? 0 : now - a.native_since_ms;
  in.now_ms = now;
  if (auto exit = DecideNativeExit(in)) {
    // Still queued (a reason that never clears): take it off Slurm's queue.
    if (a.native.phase == NativePhase::kPending && !a.pid) CancelJob(a);
    // Written (again) when the agent knows more than the shim did, so a restart reports the same.
    bool write = !shim_exit.ok() || exit->failure_kind != shim_exit->failure_kind ||
                 exit->reason != shim_exit->reason;
    agent_.RecordExit(a, *exit, write);
  }
  agent_.Pump(a);
}

void Agent::PolledExecutor::ReportQueued(Attempt& a, const std::string& state, const std::string& reason) {
  std::string key = StrCat(state, "|", reason);
  if (key == a.native_reported) return;
  a.native_reported = key;
  v1::AgentMessage m;
  v1::AttemptQueued* q = m.mutable_queued();
  q->set_attempt_id(a.id);
  q->set_native_id(a.native_id);
  q->set_state(state);
  q->set_reason(reason);
  agent_.Send(std::move(m));
}

void Agent::PolledExecutor::CancelJob(Attempt& a) {
  if (a.native_id.empty()) return;  // submission in flight: cancelled once it answers
  // Cancels made in one turn of the event loop (a run's cancel reaches thousands of attempts)
  // go to the executor together: one scancel per 200 jobs, not one per attempt.
  cancels_[a.pid.has_value() ? 1 : 0].push_back(a.native_id);
  a.cancel_signalled = true;
  if (!cancel_posted_) {
    cancel_posted_ = true;
    boost::asio::post(agent_.io_, [this] { FlushCancels(); });
  }
}

void Agent::PolledExecutor::FlushCancels() {
  cancel_posted_ = false;
  AttemptRunner* runner = agent_.runner_;
  for (int running = 0; running < 2; ++running) {
    std::vector<std::string> jobs = std::move(cancels_[running]);
    cancels_[running].clear();
    if (jobs.empty()) continue;
    size_t n = jobs.size();
    agent_.OnWorker<Status>(
        [runner, jobs = std::move(jobs), running] { return runner->CancelMany(jobs, running); },
        [this, n](Status s) {
          if (!s.ok()) agent_.log_->warn("cancel of {} job(s): {}", n, ToStd(s.message()));
          // A queued job leaves no exit.json: the next query confirms the cancel.
          poll_at_ms_ = 0;
        });
  }
}

}  // namespace longhaul::agent
