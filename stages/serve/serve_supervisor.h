// lh-serve's state machine: start the engine, wait for health, then for one real generated
// token (health alone is not ready: docs/engines.md), report the endpoint and `ready`, watch the
// engine while it serves, and stop its whole process group on request or failure.
//
//   loading --health 200--> probing --one token--> serving --SIGTERM--> stopping --> done
//      |                       |                      |
//      +-- fatal log line, engine exit, load timeout, probe timeout, health failures --> stopping
//
// Failure messages (the stage's error):
//   "fatal log line matched 'CUDA out of memory': <line>"
//   "engine exited with code N during load" / "... while serving" / "killed by signal N ..."
//   "engine not healthy after N s (last health check: ...)"
//   "healthy but no generation in N s (last probe: ...)"
//   "engine unhealthy while serving: N health checks failed in a row (last: ...)"
// Timers are Asio's (real time): these are process-level timeouts tested with real
// processes and short limits.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/event_writer.h"
#include "core/net/http_client.h"
#include "core/status.h"
#include "stages/common/group_process.h"
#include "stages/serve/argv_template.h"
#include "stages/serve/engine_output.h"
#include "stages/serve/engine_profile.h"

namespace longhaul::stages {

struct SupervisorConfig {
  EngineProfile profile;
  RenderedCommand command;
  net::HttpUrl check_url;  // where lh-serve itself reaches the engine (loopback)
  std::string endpoint;    // what dependents are told (output `endpoint`)
  std::string model;       // the served model name, for the probe and output `model`
  std::string log_dir = ".";
  bool echo = true;
};

class ServeSupervisor {
 public:
  ServeSupervisor(boost::asio::io_context& io, SupervisorConfig config, EventWriter& events);
  ~ServeSupervisor();

  // Runs until the engine is gone. OK after a stop on SIGTERM/SIGINT; otherwise the failure.
  Status Run();
  // Asks for a stop as a signal would (for tests and embedding).
  void RequestStop();

  enum class State { kLoading, kProbing, kServing, kStopping, kDone };
  State state() const { return state_; }

 private:
  Status StartEngine();
  void Arm(boost::asio::steady_timer& t, int64_t ms, void (ServeSupervisor::*fn)());
  void OnLine(bool is_stderr, std::string_view line);
  void OnExit(int code, int sig);
  void ExitFailure();
  void LoadTimedOut();
  void CheckHealth();
  void StartProbe();
  void Probe();
  void Ready();
  void ServingCheck();
  void Fail(Status s);
  void Stop();
  void StopTick();
  void Done();
  int64_t ElapsedMs() const;

  boost::asio::io_context& io_;
  SupervisorConfig cfg_;
  EventWriter& events_;
  std::unique_ptr<EngineOutput> engine_output_;  // before engine_: outlives its reads
  std::unique_ptr<GroupProcess> engine_;
  std::unique_ptr<net::HttpClient> client_;
  boost::asio::steady_timer load_timer_, check_timer_, probe_timer_, stop_timer_, exit_timer_;
  boost::asio::signal_set signals_;
  State state_ = State::kLoading;
  std::chrono::steady_clock::time_point start_, probe_deadline_, stop_started_;
  bool ready_line_seen_ = false;
  bool check_in_flight_ = false;
  bool sent_kill_ = false;
  int health_failures_ = 0;
  std::string last_health_;
  std::string last_probe_;
  std::string exit_text_;  // how the engine ended, once it has
  std::string last_stderr_;
  Status result_;
};

}  // namespace longhaul::stages
