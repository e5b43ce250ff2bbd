// `cache: {key_on: [...]}`: a reuse candidate runs again when the engine version (or the
// program's hash) recorded for it differs from the newest recorded, by an attempt or by an
// agent's Hello; and what needs it runs again too (docs/caching.md, "key_on").
#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

constexpr char kEngineWorkflow[] = R"(
name: engine
params: {engine: ref}
stages:
  gen: {run: [gen], cache: {key_on: [executable]}}
  serve:
    needs: [gen]
    run: [lh-serve, --profile, "${params.engine}"]
    cache: {key_on: [engine_version]}
  bench: {needs: [serve], run: [bench, "${serve.outputs.endpoint}"]}
)";

class VersionsTest : public SchedulerTest {
 protected:
  // Runs what was started to success, each attempt reporting the environment `env_of` gives.
  void RunStarted(uint64_t session,
                  const std::function<v1::AttemptEnvironment(const std::string&)>& env_of) {
    for (;;) {
      std::vector<v1::StartAttempt> starts = TakeStarts();
      if (starts.empty()) return;
      for (const auto& s : starts) {
        started_.push_back(s.stage());
        v1::AgentMessage m;
        m.mutable_started()->set_attempt_id(s.attempt_id());
        m.mutable_started()->set_pid(1000 + s.attempt_id());
        m.mutable_started()->set_started_at_ms(clock_.NowMs());
        *m.mutable_started()->mutable_environment() = env_of(s.stage());
        Batch([&] { scheduler_->OnAgentMessage(session, m); });
        Events(session, s.attempt_id(), {R"({"output": {"name": "endpoint", "value": "x"}})"});
        Exit(session, s.attempt_id(), 0);
      }
    }
  }
  static v1::AttemptEnvironment Env(const std::string& stage, const std::string& engine,
                                    const std::string& gen_sha = "aaaa") {
    v1::AttemptEnvironment e;
    e.set_agent_version("0.1.0");
    e.set_executable(stage == "serve" ? "lh-serve" : stage);
    e.set_executable_sha256(stage == "gen" ? gen_sha : "ffff");
    if (stage == "serve") {
      e.set_engine_profile("ref");
      e.set_engine_version(engine);
    }
    return e;
  }
  // An agent's Hello reporting the engine versions it asked at its start.
  void HelloWithEngine(const std::string& id, const std::string& version) {
    v1::Hello hello;
    hello.set_agent_id(id);
    hello.set_hostname(id + ".local");
    hello.mutable_resources()->set_cpus(4);
    hello.mutable_resources()->set_memory_bytes(int64_t{16} << 30);
    hello.set_executor("local");
    v1::EngineVersionReport* r = hello.add_engine_versions();
    r->set_profile("ref");
    r->set_version(version);
    r->set_checked_at_ms(clock_.NowMs());
    Batch([&] { scheduler_->OnAgentConnected(next_hello_session_++, hello); });
  }
  std::vector<std::string> started_;
  uint64_t next_hello_session_ = 1000;
};

TEST_F(VersionsTest, AnEngineUpgradeRerunsTheServerAndWhatNeedsItButNotTheRest) {
  uint64_t n1 = Connect("n1");
  int64_t first = Submit(kEngineWorkflow);
  RunStarted(n1, [](const std::string& s) { return Env(s, "0.8.4"); });
  ASSERT_EQ(GetRun(first).status(), v1::RUN_SUCCEEDED);
  // What each attempt ran on is stored with it.
  v1::Stage serve1 = GetStage(first, "serve");
  ASSERT_EQ(serve1.attempts_size(), 1);
  EXPECT_EQ(serve1.attempts(0).environment().engine_version(), "0.8.4");
  EXPECT_EQ(serve1.attempts(0).environment().agent_version(), "0.1.0");

  // Same versions: everything is reused.
  started_.clear();
  int64_t second = Submit(kEngineWorkflow);
  RunStarted(n1, [](const std::string& s) { return Env(s, "0.8.4"); });
  EXPECT_TRUE(started_.empty());
  EXPECT_EQ(GetStage(second, "serve").status(), v1::STAGE_CACHED);

  // An agent restarted on the upgraded engine reports it before anything ran with it.
  clock_.AdvanceMs(1000);
  HelloWithEngine("n2", "0.9.0");
  started_.clear();
  int64_t third = Submit(kEngineWorkflow);
  EXPECT_EQ(GetStage(third, "gen").status(), v1::STAGE_CACHED);
  EXPECT_EQ(GetStage(third, "gen").plan_reason(), "same inputs as run " + std::to_string(first));
  EXPECT_EQ(GetStage(third, "serve").plan_reason(), "engine version changed (0.8.4 -> 0.9.0)");
  EXPECT_EQ(GetStage(third, "bench").plan_reason(), "upstream 'serve' runs again");
  // The key is the stage's definition's, not the version's.
  EXPECT_EQ(GetStage(third, "serve").cache_key(), serve1.cache_key());
  RunStarted(n1, [](const std::string& s) { return Env(s, "0.9.0"); });
  EXPECT_EQ(started_, (std::vector<std::string>{"serve", "bench"}));
  EXPECT_EQ(GetRun(third).status(), v1::RUN_SUCCEEDED);

  // The stages that ran on 0.9.0 are what the next run reuses.
  started_.clear();
  int64_t fourth = Submit(kEngineWorkflow);
  RunStarted(n1, [](const std::string& s) { return Env(s, "0.9.0"); });
  EXPECT_TRUE(started_.empty());
  EXPECT_EQ(GetStage(fourth, "serve").cached_from_run_id(), third);
}

TEST_F(VersionsTest, ARebuiltExecutableRerunsOnlyTheStageThatAsksForIt) {
  uint64_t n1 = Connect("n1");
  Submit(kEngineWorkflow);
  RunStarted(n1, [](const std::string& s) { return Env(s, "0.8.4", "aaaa"); });
  // An attempt of another run (another workflow) records a new hash of `gen`.
  clock_.AdvanceMs(1000);
  Submit("name: other\nstages:\n  g: {run: [gen, --other]}\n");  // not a cache hit of gen
  RunStarted(n1, [](const std::string& s) {
    v1::AttemptEnvironment e = Env("gen", "", "bbbb");
    return s == "g" ? e : Env(s, "0.8.4");
  });
  started_.clear();
  int64_t again = Submit(kEngineWorkflow);
  EXPECT_EQ(GetStage(again, "gen").plan_reason(), "executable gen changed (aaaa -> bbbb)");
  // serve and bench do not ask for the executable, but they need gen, which runs again.
  EXPECT_EQ(GetStage(again, "serve").plan_reason(), "upstream 'gen' runs again");
}

TEST_F(VersionsTest, NothingRecordedMeansNothingToCompare) {
  uint64_t n1 = Connect("n1");
  Submit(kEngineWorkflow);
  RunStarted(n1, [](const std::string& s) {
    v1::AttemptEnvironment e;  // an agent older than environments
    (void)s;
    return e;
  });
  started_.clear();
  int64_t again = Submit(kEngineWorkflow);
  RunStarted(n1, [](const std::string& s) { return Env(s, "0.8.4"); });
  EXPECT_TRUE(started_.empty()) << "no version recorded anywhere: reused as the key says";
  EXPECT_EQ(GetStage(again, "serve").status(), v1::STAGE_CACHED);
}

}  // namespace
}  // namespace longhaul::scheduler
