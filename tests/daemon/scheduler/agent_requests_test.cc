#include "daemon/scheduler/agent_requests.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace longhaul::scheduler {
namespace {

// Records what each request was answered with, by the name its test gave it.
struct Answers {
  std::vector<std::pair<std::string, Status>> got;
  AgentRequests<int>::Done For(const std::string& name) {
    return [this, name](Result<int> r) { got.emplace_back(name, r.status()); };
  }
};

TEST(AgentRequestsTest, IdsComeFromTheSharedCounterSoKindsNeverCollide) {
  int64_t next_id = 1;
  AgentRequests<int> logs(&next_id);
  AgentRequests<std::string> checks(&next_id);
  Answers answers;
  int64_t first = logs.Add("n1", answers.For("log"));
  int64_t second = checks.Add("n1", [](Result<std::string>) {});
  int64_t other = next_id++;  // another message's id (CheckGpu)
  int64_t third = logs.Add("n1", answers.For("log2"));
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 2);
  EXPECT_EQ(other, 3);
  EXPECT_EQ(third, 4);
  EXPECT_FALSE(logs.Take(second).has_value()) << "an id of another kind is not a log's";
  EXPECT_EQ(logs.size(), 2u);
  EXPECT_EQ(checks.size(), 1u);
}

TEST(AgentRequestsTest, TakeHandsOutTheCallbackOnce) {
  int64_t next_id = 7;
  AgentRequests<int> requests(&next_id);
  int answer = 0;
  int64_t id = requests.Add("n1", [&](Result<int> r) { answer = *r; });
  std::optional<AgentRequests<int>::Done> done = requests.Take(id);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(requests.size(), 0u);
  (*done)(42);
  EXPECT_EQ(answer, 42);
  EXPECT_FALSE(requests.Take(id).has_value()) << "an answer sent twice";
  EXPECT_FALSE(requests.Take(12345).has_value()) << "an id never given";
}

TEST(AgentRequestsTest, FailAgentAnswersOnlyThatAgentsRequestsOldestFirst) {
  int64_t next_id = 1;
  AgentRequests<int> requests(&next_id);
  Answers answers;
  requests.Add("n1", answers.For("n1 first"));
  int64_t kept = requests.Add("n2", answers.For("n2"));
  requests.Add("n1", answers.For("n1 second"));
  requests.FailAgent("n1", absl::UnavailableError("agent n1 disconnected"));
  ASSERT_EQ(answers.got.size(), 2u);
  EXPECT_EQ(answers.got[0].first, "n1 first");
  EXPECT_EQ(answers.got[1].first, "n1 second");
  for (const auto& [name, st] : answers.got) {
    EXPECT_TRUE(absl::IsUnavailable(st)) << name << ": " << st;
    EXPECT_EQ(st.message(), "agent n1 disconnected");
  }
  EXPECT_EQ(requests.size(), 1u);
  EXPECT_TRUE(requests.Take(kept).has_value());
}

TEST(AgentRequestsTest, FailAllAnswersEveryRequest) {
  int64_t next_id = 1;
  AgentRequests<int> requests(&next_id);
  Answers answers;
  requests.Add("n1", answers.For("a"));
  requests.Add("n2", answers.For("b"));
  requests.FailAll(absl::UnavailableError("coordinator state reloaded"));
  ASSERT_EQ(answers.got.size(), 2u);
  EXPECT_TRUE(absl::IsUnavailable(answers.got[0].second));
  EXPECT_TRUE(absl::IsUnavailable(answers.got[1].second));
  EXPECT_EQ(requests.size(), 0u);
  requests.FailAll(absl::UnavailableError("again"));
  EXPECT_EQ(answers.got.size(), 2u) << "each request is answered once";
}

TEST(AgentRequestsTest, ACallbackMayAskAgainWhileFailing) {
  int64_t next_id = 1;
  AgentRequests<int> requests(&next_id);
  int64_t retried = 0;
  Status retry_answer = OkStatus();
  requests.Add("n1", [&](Result<int>) {
    // The caller asks another agent at once; that request is not failed with the first.
    retried = requests.Add("n2", [&](Result<int> r) { retry_answer = r.status(); });
  });
  requests.Add("n1", [&](Result<int>) { requests.Add("n1", [](Result<int>) {}); });
  requests.FailAgent("n1", absl::UnavailableError("gone"));
  EXPECT_NE(retried, 0);
  EXPECT_EQ(requests.size(), 2u) << "both requests made by the callbacks wait";
  EXPECT_TRUE(retry_answer.ok());
  requests.FailAll(absl::UnavailableError("reloaded"));
  EXPECT_TRUE(absl::IsUnavailable(retry_answer));
  EXPECT_EQ(requests.size(), 0u);
}

}  // namespace
}  // namespace longhaul::scheduler
