// A full disk under a real agent (docs/operations.md, "A full disk"): the agent's state dir is
// a small tmpfs, and a stage writes progress lines and a big file until it is full, then exits
// 0 while it still is. Its exit is recorded as 0, the agent shows "disk full" while it lasts
// (ListAgents and `longhaul agents`), its log says so once per episode and holds no cut line,
// and once space is freed the state clears and the next stage on the same agent succeeds.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <vector>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/http/exposition.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"
#include "tests/integration/journal.h"
#include "tests/testing/tmpfs.h"

namespace longhaul::testing {
namespace {

constexpr int64_t kTmpfsBytes = 24 << 20;

std::string RunList(const std::string& script) {
  return nlohmann::json::array({"/bin/sh", "-c", script}).dump();
}

int CountLines(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

Result<v1::AgentInfo> Agent0(Cluster& c) {
  ASSIGN_OR_RETURN(std::vector<v1::AgentInfo> agents, c.ListAgents());
  for (const auto& a : agents) {
    if (a.id() == c.AgentId(0)) return a;
  }
  return absl::NotFoundError("agent n0 not listed");
}

TEST(DiskFullTest, StageExitSurvivesAFullStateDirAndTheAgentShowsItUntilSpaceReturns) {
  TmpfsMount fs(kTmpfsBytes);  // before the cluster: unmounted after its processes are gone
  if (!fs.ok()) GTEST_SKIP() << fs.error();
  std::string agent_log = fs.Join("agent.log");
  ClusterOptions opts;
  opts.per_agent_flags = {{"--log-file", agent_log, "--disk-min-free", "1M"}};
  Cluster c(opts);
  // The agent's state dir (attempt dirs, output dirs under data/, its log) is the tmpfs.
  ASSERT_EQ(::symlink(fs.path().c_str(), c.AgentStateDir(0).c_str()), 0);
  Status st = c.Start();
  ASSERT_TRUE(st.ok()) << st.message() << "\n" << c.Logs();

  std::string release = c.dir().Join("release");
  std::string fill =
      "i=0; while [ $i -lt 20000 ]; do echo \"progress line $i of a stage that fills the disk\";"
      " echo \"{\\\"progress\\\": {\\\"done\\\": $i, \\\"total\\\": 20000}}\" >> "
      "\"$LONGHAUL_EVENTS\"; i=$((i+1)); done; "
      "head -c 40000000 /dev/zero > big 2>/dev/null; "
      "while [ ! -e " + release + " ]; do sleep 0.05; done; exit 0";
  Result<int64_t> id = c.Submit("name: fill\nstages:\n" + StageYaml("fill", RunList(fill)));
  ASSERT_TRUE(id.ok()) << id.status().message();

  // While the stage holds the disk full, the agent says so.
  Result<v1::AgentInfo> full = absl::UnknownError("not yet");
  ASSERT_TRUE(WaitFor(
      [&] {
        full = Agent0(c);
        return full.ok() && full->disk_full();
      },
      30'000))
      << (full.ok() ? full->DebugString() : full.status().ToString()) << c.Logs();
  EXPECT_LT(full->state_free_bytes(), 1 << 20);
  CommandResult agents = c.Cli({"agents"});
  EXPECT_NE(agents.out.find("connected, disk full"), std::string::npos) << agents.out;

  // The stage exits 0 on the full disk: 0 is what is recorded, not -1.
  ASSERT_EQ(::close(::creat(release.c_str(), 0644)), 0);
  Result<v1::Run> run = c.WaitForRunEnd(*id);
  ASSERT_TRUE(run.ok()) << run.status().message() << c.Logs();
  EXPECT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  const v1::Attempt* attempt = FindAttempt(*run, "fill", 1);
  ASSERT_NE(attempt, nullptr) << DescribeRun(*run);
  EXPECT_EQ(attempt->exit_code(), 0) << DescribeRun(*run);
  EXPECT_TRUE(Agent0(c)->disk_full()) << "space came back too early for the test to mean much";

  // Space comes back: the state clears by itself, and the same agent runs the next stage.
  std::vector<std::filesystem::path> big;
  for (const auto& e : std::filesystem::recursive_directory_iterator(fs.Join("data"))) {
    if (e.path().filename() == "big") big.push_back(e.path());
  }
  ASSERT_EQ(big.size(), 1u);
  std::filesystem::remove(big[0]);
  ASSERT_TRUE(WaitFor([&] { return !Agent0(c)->disk_full(); }, 20'000)) << c.Logs();
  Result<int64_t> next =
      c.Submit("name: after\nstages:\n" + StageYaml("after", RunList("echo fine; exit 0")));
  ASSERT_TRUE(next.ok()) << next.status().message();
  Result<v1::Run> after = c.WaitForRunEnd(*next);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(after->status(), v1::RUN_SUCCEEDED) << DescribeRun(*after);

  // The agent's log: one line when the episode started, one when it ended, no cut line.
  std::string log = ReadTextFile(agent_log);
  EXPECT_EQ(CountLines(log, "disk full: state dir"), 1) << log.substr(0, 4000);
  EXPECT_EQ(CountLines(log, "disk space back: state dir"), 1) << log.substr(0, 4000);
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back(), '\n');
  std::regex whole(R"(^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} \S+ \[\w+\] .*|-- \d+ log line\(s\) dropped: .*)$)");
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    EXPECT_TRUE(std::regex_match(line, whole)) << "a cut or odd line: " << line;
  }
}

// longhauld's state dir on a small tmpfs, filled while a stage streams events: the store
// answers SQLITE_FULL, /readyz says 503 with the reason and longhaul_store_disk_full is 1, the
// log says so once; when space returns it goes on by itself, and every event the stage wrote
// is stored exactly once.
TEST(DiskFullTest, CoordinatorStoreOnAFullDiskLosesNothingAndResumesWhenSpaceReturns) {
  TmpfsMount fs(32 << 20);  // before the cluster: unmounted after its processes are gone
  if (!fs.ok()) GTEST_SKIP() << fs.error();
  // No per-attempt event rate: the stage below writes as fast as its shell can until told to
  // stop (hundreds of thousands of lines on a fast host), and at the default 5,000 a second
  // the agent would still be sending them long after the run's deadline. What is checked here
  // is that none is lost, not the agent's rate limit (agent tests check that).
  ClusterOptions options;
  options.agent_flags = {"--max-event-rate", "0"};
  Cluster c(options);
  std::filesystem::remove(c.coordinator_state_dir());  // made empty by the constructor
  ASSERT_EQ(::symlink(fs.path().c_str(), c.coordinator_state_dir().c_str()), 0);
  Status st = c.Start();
  ASSERT_TRUE(st.ok()) << st.message() << "\n" << c.Logs();

  std::string stop = c.dir().Join("stop");
  std::string stream =
      "i=0; while [ ! -e " + stop + " ]; do i=$((i+1)); "
      "echo \"{\\\"progress\\\": {\\\"done\\\": $i}}\" >> \"$LONGHAUL_EVENTS\"; done; exit 0";
  Result<int64_t> id = c.Submit("name: stream\nstages:\n" + StageYaml("stream", RunList(stream)));
  ASSERT_TRUE(id.ok()) << id.status().message();
  ASSERT_TRUE(c.WaitForRun(*id, [](const v1::Run& r) {
                 const v1::Attempt* a = FindAttempt(r, "stream", 1);
                 return a != nullptr && a->events() > 0;
               }).ok())
      << c.Logs();

  auto ready = [&] {
    Result<HttpResult> r = HttpGet(c.http_address(), "/readyz");
    return r.ok() ? *r : HttpResult{};
  };
  auto full_gauge = [&] {
    Result<HttpResult> r = HttpGet(c.http_address(), "/metrics");
    if (!r.ok() || r->status != 200) return -1.0;
    Exposition e;
    ParseExposition(r->body, e);
    return SeriesValue(e, "longhaul_store_disk_full");
  };
  EXPECT_EQ(full_gauge(), 0);
  ASSERT_EQ(fs.Fill("filler"), ENOSPC);
  HttpResult not_ready;
  ASSERT_TRUE(WaitFor(
      [&] {
        not_ready = ready();
        return not_ready.status == 503;
      },
      30'000))
      << not_ready.status << " " << not_ready.body << c.Logs();
  EXPECT_NE(not_ready.body.find("the store's disk is full: "), std::string::npos)
      << not_ready.body;
  EXPECT_EQ(full_gauge(), 1);

  // Space returns: it goes on by itself.
  std::filesystem::remove(fs.Join("filler"));
  ASSERT_TRUE(WaitFor([&] { return ready().status == 200; }, 30'000)) << ready().body << c.Logs();
  EXPECT_EQ(full_gauge(), 0);
  ASSERT_EQ(::close(::creat(stop.c_str(), 0644)), 0);
  Result<v1::Run> run = c.WaitForRunEnd(*id, 60'000);
  ASSERT_TRUE(run.ok()) << run.status().message() << c.Logs();
  EXPECT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);

  // Every line of the attempt's events file is stored, once.
  const v1::Attempt* attempt = FindAttempt(*run, "stream", 1);
  ASSERT_NE(attempt, nullptr);
  std::string file = StrCat(c.AgentStateDir(0), "/attempts/", attempt->id(), "/events.jsonl");
  int lines = CountLines(ReadTextFile(file), "\n");
  ASSERT_GT(lines, 0) << file;
  std::string of_attempt = StrCat(" FROM events WHERE attempt_id = ", attempt->id());
  ASSERT_TRUE(WaitFor(
      [&] { return c.Query("SELECT count(*)" + of_attempt).value_or("") == std::to_string(lines); },
      30'000))
      << c.Query("SELECT count(*)" + of_attempt).value_or("?") << " stored of " << lines;
  EXPECT_EQ(c.Query("SELECT count(DISTINCT seq)" + of_attempt).value_or(""), std::to_string(lines));

  // One line when the episode started, one when it ended.
  std::string log = ReadTextFile(c.dir().Join("logs/longhauld.log"));
  EXPECT_EQ(CountLines(log, "store full: "), 1) << log.substr(0, 4000);
  EXPECT_EQ(CountLines(log, "store writable again after"), 1);
  EXPECT_EQ(c.IntegrityCheck().value_or(""), "ok");
}

}  // namespace
}  // namespace longhaul::testing
