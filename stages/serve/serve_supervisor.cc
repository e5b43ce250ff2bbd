#include "stages/serve/serve_supervisor.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>

#include "core/logging.h"
#include "core/strings.h"
#include "stages/common/openai_call.h"

namespace longhaul::stages {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr int64_t kHealthRequestMs = 5000;
constexpr int64_t kProbeRetryMs = 1000;
constexpr int64_t kStopTickMs = 50;
constexpr int64_t kAfterKillMs = 10'000;
// A process that dies usually says why on stderr just before; wait this long for those lines
// (and a fatal pattern in them) before reporting the bare exit.
constexpr int64_t kExitLinesGraceMs = 300;

std::string Seconds(int64_t ms) { return StrCat(static_cast<double>(ms) / 1000.0); }

int64_t MsUntil(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t - SteadyClock::now()).count();
}

}  // namespace

ServeSupervisor::ServeSupervisor(boost::asio::io_context& io, SupervisorConfig config,
                                 EventWriter& events)
    : io_(io),
      cfg_(std::move(config)),
      events_(events),
      load_timer_(io),
      check_timer_(io),
      probe_timer_(io),
      stop_timer_(io),
      exit_timer_(io),
      signals_(io, SIGINT, SIGTERM) {}

ServeSupervisor::~ServeSupervisor() = default;

int64_t ServeSupervisor::ElapsedMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start_).count();
}

void ServeSupervisor::Arm(boost::asio::steady_timer& t, int64_t ms, void (ServeSupervisor::*fn)()) {
  t.expires_after(std::chrono::milliseconds(std::max<int64_t>(ms, 0)));
  t.async_wait([this, fn](boost::system::error_code ec) {
    if (!ec) (this->*fn)();
  });
}

Status ServeSupervisor::Run() {
  auto log = GetLogger("serve");
  start_ = SteadyClock::now();
  client_ = std::make_unique<net::HttpClient>(io_, cfg_.check_url);
  signals_.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    GetLogger("serve")->info("signal {}: stopping the engine", sig);
    RequestStop();
  });
  if (Status s = StartEngine(); !s.ok()) {
    signals_.cancel();
    return Annotate(s, StrCat("starting engine '", cfg_.profile.name, "'"));
  }
  log->info("engine '{}' started, pid {} (own process group): {}", cfg_.profile.name,
            engine_->pid(), StrJoin(cfg_.command.argv, " "));
  Arm(load_timer_, cfg_.profile.load_timeout_ms, &ServeSupervisor::LoadTimedOut);
  Arm(check_timer_, cfg_.profile.health_interval_ms, &ServeSupervisor::CheckHealth);
  io_.run();
  return result_;
}

Status ServeSupervisor::StartEngine() {
  // Log files first: an engine whose output cannot be kept is not started.
  ASSIGN_OR_RETURN(engine_output_,
                   EngineOutput::Open(
                       cfg_.log_dir + "/engine.stdout.log", cfg_.log_dir + "/engine.stderr.log",
                       cfg_.echo, [this](bool err, std::string_view line) { OnLine(err, line); }));
  GroupProcess::Options o;
  o.argv = cfg_.command.argv;
  o.env = cfg_.command.env;
  // The engine is not the stage: events it might write must not land in lh-serve's file.
  o.unset_env = {"LONGHAUL_EVENTS"};
  o.what = "engine command";
  GroupProcess::Handlers h;
  h.on_output = [this](bool err, std::string_view bytes) { engine_output_->Feed(err, bytes); };
  h.on_output_end = [this](bool err, bool) { engine_output_->End(err); };
  h.on_exit = [this](int code, int sig) { OnExit(code, sig); };
  ASSIGN_OR_RETURN(engine_, GroupProcess::Start(io_, std::move(o), std::move(h)));
  return OkStatus();
}

void ServeSupervisor::RequestStop() {
  if (state_ == State::kStopping || state_ == State::kDone) return;
  Stop();
}

void ServeSupervisor::OnLine(bool is_stderr, std::string_view line) {
  if (is_stderr && !StripWhitespace(line).empty()) last_stderr_ = std::string(line.substr(0, 300));
  if (state_ == State::kStopping || state_ == State::kDone) return;
  const EngineProfile& p = cfg_.profile;
  if (p.ready_log_line && !ready_line_seen_ &&
      std::regex_search(line.begin(), line.end(), p.ready_log_line->regex)) {
    ready_line_seen_ = true;
    GetLogger("serve")->info("ready log line seen: {}", line);
  }
  bool fatal_applies = state_ != State::kServing || p.fatal_while_serving;
  if (!fatal_applies) return;
  for (const auto& pat : p.fatal_log_patterns) {
    if (std::regex_search(line.begin(), line.end(), pat.regex)) {
      return Fail(
          absl::FailedPreconditionError(StrCat("fatal log line matched '", pat.text, "': ", line)));
    }
  }
}

void ServeSupervisor::OnExit(int code, int sig) {
  exit_text_ = sig != 0 ? StrCat("killed by signal ", sig) : StrCat("exited with code ", code);
  if (state_ == State::kStopping) return StopTick();
  if (state_ == State::kDone) return;
  Arm(exit_timer_, kExitLinesGraceMs, &ServeSupervisor::ExitFailure);
}

void ServeSupervisor::ExitFailure() {
  if (state_ == State::kStopping || state_ == State::kDone) return;
  std::string phase = state_ == State::kServing ? "while serving" : "during load";
  std::string tail = last_stderr_.empty() ? "" : StrCat(" (last stderr line: ", last_stderr_, ")");
  Fail(absl::UnavailableError(StrCat("engine ", exit_text_, " ", phase, tail)));
}

void ServeSupervisor::LoadTimedOut() {
  if (state_ == State::kLoading) {
    Fail(absl::DeadlineExceededError(
        StrCat("engine not healthy after ", Seconds(cfg_.profile.load_timeout_ms),
               " s (last health check: ", last_health_.empty() ? "none" : last_health_, ")")));
  }
}

void ServeSupervisor::CheckHealth() {
  if (state_ != State::kLoading) return;
  const EngineProfile& p = cfg_.profile;
  if (p.ready_log_line && !ready_line_seen_) {
    last_health_ = StrCat("waiting for the ready log line '", p.ready_log_line->text, "'");
    return Arm(check_timer_, p.health_interval_ms, &ServeSupervisor::CheckHealth);
  }
  auto status = std::make_shared<int>(0);
  net::HttpRequest req;
  req.target = cfg_.check_url.Target(p.health_path);
  req.timeouts.total_ms = kHealthRequestMs;
  net::HttpHandler h;
  h.on_head = [status](const net::HttpResponseHead& head) { *status = head.status; };
  h.on_done = [this, status](const Status& s) {
    if (state_ != State::kLoading) return;
    if (s.ok() && *status == 200) return StartProbe();
    last_health_ = s.ok() ? StrCat("HTTP ", *status) : ToStd(s.message());
    Arm(check_timer_, cfg_.profile.health_interval_ms, &ServeSupervisor::CheckHealth);
  };
  client_->Send(std::move(req), std::move(h));
}

void ServeSupervisor::StartProbe() {
  state_ = State::kProbing;
  probe_deadline_ = SteadyClock::now() + std::chrono::milliseconds(cfg_.profile.probe_timeout_ms);
  GetLogger("serve")->info("healthy after {:.1f} s; asking for one generated token",
                           ElapsedMs() / 1000.0);
  Probe();
}

void ServeSupervisor::Probe() {
  if (state_ != State::kProbing) return;
  const EngineProfile& p = cfg_.profile;
  int64_t remaining = MsUntil(probe_deadline_);
  if (remaining <= 0) {
    return Fail(absl::DeadlineExceededError(
        StrCat("healthy but no generation in ", Seconds(p.probe_timeout_ms),
               " s (last probe: ", last_probe_.empty() ? "none" : last_probe_, ")")));
  }
  GenerationParams gp;
  gp.model = cfg_.model;
  gp.max_tokens = p.probe_max_tokens;
  gp.temperature = 0.0;
  gp.stream = false;
  std::string body = p.probe_api == OpenAiApi::kChat
                         ? BuildChatRequest({ChatMessage("user", p.probe_prompt)}, gp)
                         : BuildCompletionRequest(p.probe_prompt, gp);
  net::HttpTimeouts t;
  t.total_ms = remaining;
  CallOpenAi(*client_, cfg_.check_url.Target(OpenAiApiPath(p.probe_api)), std::move(body),
             /*stream=*/false, t, [this](CallOutcome out) {
               if (state_ != State::kProbing) return;
               if (out.status.ok()) return Ready();
               last_probe_ = ToStd(out.status.message());
               // A 4xx will not fix itself (unknown model name, bad request): say so now.
               if (out.status.code() == absl::StatusCode::kInvalidArgument) {
                 return Fail(absl::FailedPreconditionError(
                     StrCat("the engine rejected the generation probe: ", last_probe_)));
               }
               Arm(probe_timer_, std::min(kProbeRetryMs, MsUntil(probe_deadline_)),
                   &ServeSupervisor::Probe);
             });
}

void ServeSupervisor::Ready() {
  state_ = State::kServing;
  load_timer_.cancel();
  double load_s = ElapsedMs() / 1000.0;
  events_.Metric("load_seconds", load_s);
  events_.Output("endpoint", cfg_.endpoint);
  events_.Output("model", cfg_.model);
  events_.Ready();
  GetLogger("serve")->info("ready: {} serves '{}' (load {:.1f} s)", cfg_.endpoint, cfg_.model,
                           load_s);
  Arm(check_timer_, cfg_.profile.serving_health_interval_ms, &ServeSupervisor::ServingCheck);
}

void ServeSupervisor::ServingCheck() {
  if (state_ != State::kServing) return;
  auto status = std::make_shared<int>(0);
  net::HttpRequest req;
  req.target = cfg_.check_url.Target(cfg_.profile.health_path);
  req.timeouts.total_ms = kHealthRequestMs;
  net::HttpHandler h;
  h.on_head = [status](const net::HttpResponseHead& head) { *status = head.status; };
  h.on_done = [this, status](const Status& s) {
    if (state_ != State::kServing) return;
    if (s.ok() && *status == 200) {
      health_failures_ = 0;
    } else {
      ++health_failures_;
      last_health_ = s.ok() ? StrCat("HTTP ", *status) : ToStd(s.message());
      GetLogger("serve")->warn("health check failed ({} in a row): {}", health_failures_,
                               last_health_);
      if (health_failures_ >= cfg_.profile.serving_health_failures) {
        return Fail(absl::UnavailableError(
            StrCat("engine unhealthy while serving: ", health_failures_,
                   " health checks failed in a row (last: ", last_health_, ")")));
      }
    }
    Arm(check_timer_, cfg_.profile.serving_health_interval_ms, &ServeSupervisor::ServingCheck);
  };
  client_->Send(std::move(req), std::move(h));
}

void ServeSupervisor::Fail(Status s) {
  if (state_ == State::kStopping || state_ == State::kDone) return;
  result_ = s;
  std::string msg = ToStd(s.message());
  GetLogger("serve")->error("{}", msg);
  events_.Message("error", msg);
  Stop();
}

void ServeSupervisor::Stop() {
  state_ = State::kStopping;
  load_timer_.cancel();
  check_timer_.cancel();
  probe_timer_.cancel();
  exit_timer_.cancel();
  signals_.cancel();
  client_->Shutdown();
  stop_started_ = SteadyClock::now();
  if (engine_ == nullptr) return Done();
  if (!engine_->exited() || engine_->GroupAlive()) {
    GetLogger("serve")->info("stopping the engine's process group {} (SIGTERM; SIGKILL after {} s)",
                             engine_->pid(), Seconds(cfg_.profile.stop_grace_ms));
    engine_->SignalGroup(SIGTERM);
  }
  StopTick();
}

void ServeSupervisor::StopTick() {
  if (state_ != State::kStopping) return;
  if (engine_->exited() && !engine_->GroupAlive()) return Done();
  int64_t elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - stop_started_)
          .count();
  if (!sent_kill_ && elapsed >= cfg_.profile.stop_grace_ms) {
    GetLogger("serve")->warn("the engine did not stop within {} s: SIGKILL to its group",
                             Seconds(cfg_.profile.stop_grace_ms));
    engine_->SignalGroup(SIGKILL);
    sent_kill_ = true;
  }
  if (sent_kill_ && elapsed >= cfg_.profile.stop_grace_ms + kAfterKillMs) {
    GetLogger("serve")->error("processes of group {} still alive after SIGKILL", engine_->pid());
    return Done();
  }
  Arm(stop_timer_, kStopTickMs, &ServeSupervisor::StopTick);
}

void ServeSupervisor::Done() {
  state_ = State::kDone;
  if (engine_ && !exit_text_.empty()) {
    GetLogger("serve")->info("engine {}", exit_text_);
  }
  // Output pipes held open by a stray grandchild must not keep lh-serve alive.
  io_.stop();
}

}  // namespace longhaul::stages
