#include "tests/agent/agent_test_util.h"

#include <dirent.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/strings.h"

namespace longhaul::testing {

AgentHarness::AgentHarness()
    : state_(tmp_.Join("state")),
      agent_log_(tmp_.Join("agent.log")),
      coordinator_(std::make_unique<FakeCoordinator>()) {
  port_ = coordinator_->port();
}

AgentHarness::~AgentHarness() {
  agent_.reset();
  // Whatever the test left running: every shim and stage recorded in the state dir.
  std::string attempts = state_ + "/attempts";
  if (DIR* d = ::opendir(attempts.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string text = ReadTextFile(attempts + "/" + e->d_name + "/pid.json");
      if (text.empty()) continue;
      auto j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_discarded()) continue;
      pid_t stage = j.value("stage_pid", 0), shim = j.value("shim_pid", 0);
      if (stage > 0 && ProcessAlive(stage)) ::kill(-stage, SIGKILL);
      if (shim > 0 && ProcessAlive(shim)) ::kill(shim, SIGKILL);
    }
    ::closedir(d);
  }
}

void AgentHarness::StartAgent(const std::vector<std::string>& extra,
                              const std::map<std::string, std::string>& env) {
  std::string target = agent_target_.empty() ? "127.0.0.1:" + std::to_string(port_) : agent_target_;
  std::vector<std::string> argv = {BinPath("longhaul-agent"), "--coordinator", target,
                                   "--state-dir", state_};
  // Test defaults, unless the test gives the flag itself.
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--id", "test-agent"}, {"--heartbeat", "200ms"}, {"--log-level", "debug"}}) {
    if (std::find(extra.begin(), extra.end(), flag) == extra.end()) {
      argv.insert(argv.end(), {flag, value});
    }
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  agent_.reset();
  auto p = Subprocess::Start(argv, env, agent_log_);
  if (!p.ok()) std::abort();
  agent_ = std::move(*p);
}

void AgentHarness::KillAgent() {
  if (agent_ == nullptr) return;
  agent_->Signal(SIGKILL);
  agent_->Wait(10'000);
}

bool AgentHarness::AgentRunning() { return agent_ != nullptr && agent_->Running(); }

pid_t AgentHarness::agent_pid() const { return agent_ != nullptr ? agent_->pid() : 0; }

void AgentHarness::StopCoordinator() { coordinator_.reset(); }

void AgentHarness::RestartCoordinator() {
  coordinator_.reset();
  coordinator_ = std::make_unique<FakeCoordinator>(port_);
}

std::string AgentHarness::AttemptFile(int64_t id, const std::string& name) const {
  return StrCat(state_, "/attempts/", id, "/", name);
}

v1::StartAttempt AgentHarness::Spec(int64_t id, const std::vector<std::string>& argv) const {
  v1::StartAttempt s;
  s.set_attempt_id(id);
  s.set_run_id(7);
  s.set_stage("train");
  s.set_attempt(1);
  for (const auto& a : argv) s.add_argv(a);
  s.set_output_dir(StrCat(tmp_.path(), "/out/", id));
  return s;
}

bool AgentHarness::WaitConnected(int hellos, int64_t timeout_ms) {
  return WaitFor([&] { return coordinator_->connected() && coordinator_->hello_count() >= hellos; },
                 timeout_ms);
}

bool AgentHarness::WaitExited(int64_t id, int64_t timeout_ms) {
  return WaitFor([&] { return coordinator_->exited(id).has_value(); }, timeout_ms);
}

std::string LeaveDetachedProcessesScript(const std::string& work, const std::string& then) {
  return "setsid sh -c 'echo $$ > " + work + "/a.tmp; mv " + work + "/a.tmp " + work +
         "/a.pid; exec sleep 1000' & ( setsid sh -c 'echo $$ > " + work + "/b.tmp; mv " + work +
         "/b.tmp " + work + "/b.pid; exec sleep 1000' & ); while [ ! -e " + work +
         "/a.pid ] || [ ! -e " + work + "/b.pid ]; do sleep 0.01; done; " + then;
}

void ExpectDetachedProcessesGone(const std::string& work) {
  for (const char* name : {"a.pid", "b.pid"}) {
    std::string text = ReadTextFile(work + "/" + name);
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_FALSE(ProcessAlive(std::stoi(text))) << name;
  }
}

void ExpectEventsMatchFile(const std::map<int64_t, std::string>& events, const std::string& file) {
  std::vector<std::string> lines = SplitLines(ReadTextFile(file));
  ASSERT_EQ(events.size(), lines.size());
  int64_t seq = 0;
  for (const auto& [s, line] : events) {
    EXPECT_EQ(s, ++seq);
    EXPECT_EQ(line, lines[static_cast<size_t>(s - 1)]);
  }
}

}  // namespace longhaul::testing
