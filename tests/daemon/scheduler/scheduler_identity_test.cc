// Attempt ids and the store's identity as agents see them: Welcome names the cluster, new ids
// start above what an agent reports, and an id the agent holds for another attempt is lost and
// retried under a new id, never a failure and never acknowledged.
#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

constexpr char kIdentityWorkflow[] = R"(
name: ids
stages:
  a: {run: [prog]}
)";

TEST_F(SchedulerTest, WelcomeNamesTheStoresClusterAndNewIdsStartAboveTheAgentsHighest) {
  v1::OwnedAttempt stale;  // from a history this store does not know (restored from a backup)
  stale.set_attempt_id(40);
  stale.set_running(true);
  uint64_t n1 = ConnectHello("n1", 4, 0, {stale}, {}, "local");
  std::vector<v1::CoordinatorMessage> sent = TakeAll();
  const v1::CoordinatorMessage* welcome = nullptr;
  for (const auto& m : sent) {
    if (m.has_welcome()) welcome = &m;
  }
  ASSERT_NE(welcome, nullptr);
  EXPECT_EQ(welcome->welcome().cluster_id(), store_->identity().cluster_id);
  EXPECT_EQ(welcome->welcome().incarnation(), store_->identity().incarnation);
  EXPECT_FALSE(welcome->welcome().new_cluster());

  // A later Hello says more: the agent's directories go up to 57.
  v1::Hello hello;
  hello.set_agent_id("n1");
  hello.mutable_resources()->set_cpus(4);
  hello.set_highest_attempt_id(57);
  Batch([&] { scheduler_->OnAgentConnected(n1, hello); });
  TakeAll();
  Submit(kIdentityWorkflow);
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].attempt_id(), 58);
}

TEST_F(SchedulerTest, AnIdTheAgentHoldsForAnotherAttemptIsLostAndRetriedUnderANewId) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kIdentityWorkflow);
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  int64_t id = starts[0].attempt_id();
  TakeAll();
  v1::AgentMessage m;
  v1::AttemptExited* e = m.mutable_exited();
  e->set_attempt_id(id);
  e->set_exit_code(-1);
  e->set_ended_at_ms(clock_.NowMs());
  e->set_id_collision(true);
  e->set_reason(StrCat("lost: attempt id ", id,
                       " is already used on agent n1 by run 3 stage x "
                       "attempt 1; nothing was started"));
  Batch([&] { scheduler_->OnAgentMessage(n1, m); });
  std::vector<v1::StartAttempt> retry;
  for (const auto& sent : TakeAll()) {
    EXPECT_FALSE(sent.has_ack_exit()) << "the other attempt's record would be closed";
    if (sent.has_start()) retry.push_back(sent.start());
  }
  v1::Stage a = GetStage(run, "a");
  ASSERT_GE(a.attempts_size(), 1);
  EXPECT_EQ(a.attempts(0).state(), v1::ATTEMPT_LOST);
  EXPECT_NE(a.attempts(0).reason().find("is already used on agent n1"), std::string::npos);
  EXPECT_NE(a.status(), v1::STAGE_FAILED);

  for (int i = 0; i < 12 && retry.empty(); ++i) {  // past the back-off; n1 keeps talking
    clock_.AdvanceMs(5'000);
    Heartbeat(n1);
    retry = TakeStarts();
  }
  ASSERT_EQ(retry.size(), 1u) << GetStage(run, "a").reason();
  EXPECT_GT(retry[0].attempt_id(), id);
  EXPECT_EQ(retry[0].attempt(), 2);
  Exit(n1, retry[0].attempt_id(), 0);
  EXPECT_EQ(GetStage(run, "a").status(), v1::STAGE_SUCCEEDED);
}

}  // namespace
}  // namespace longhaul::scheduler
