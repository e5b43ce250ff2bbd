// Services and their consumers with real daemons: the sweep example's shape (servers of one
// CPU, each with a benchmark of half a CPU, more servers than fit beside their benchmarks) on
// a 2-CPU agent, and the same with GPUs (servers and benchmarks each needing a GPU, more
// items than GPUs). Before the rule in docs/architecture.md ("Services and their consumers"),
// both hung for ever: the servers took the room their benchmarks waited for. And the backstop
// on a shape the rule cannot foresee, with the record of why it stopped a service.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

// `items` servers (a fake service: lh-testjob --ready) and one benchmark per server; `extra`
// is added to the resources of both.
std::string Sweep(int items, const std::string& server_resources,
                  const std::string& bench_resources) {
  std::string list;
  for (int i = 1; i <= items; ++i) list += (i > 1 ? ", " : "") + std::to_string(i);
  std::string testjob = BinPath("lh-testjob");
  return "name: sweep-shape\n"
         "stages:\n"
         "  prep:\n"
         "    run: " +
         YamlList({testjob, "--sleep", "0.1"}) +
         "\n"
         "    resources: {cpus: 0.5}\n"
         "  server:\n"
         "    kind: service\n"
         "    foreach: {n: [" +
         list +
         "]}\n"
         "    needs: [prep]\n"
         "    run: " +
         YamlList({testjob, "--ready", "--output", "endpoint=http://127.0.0.1:1"}) +
         "\n"
         "    ready_timeout: 1m\n"
         "    resources: " +
         server_resources +
         "\n"
         "  bench:\n"
         "    foreach: {n: [" +
         list +
         "]}\n"
         "    needs: [server, prep]\n"
         "    run: " +
         YamlList({testjob, "--sleep", "0.2", "--print", "${server-${item.n}.outputs.endpoint}"}) +
         "\n"
         "    resources: " +
         bench_resources + "\n";
}

class ServiceRoomTest : public ClusterTest {};

// Far above the second or two these take: a ceiling that catches a hang, not noise.
constexpr int64_t kCeilingMs = 60'000;

TEST_F(ServiceRoomTest, TheSweepShapeFinishesOnATwoCpuAgent) {
  ClusterOptions o;
  o.cpus = 2;
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  Result<int64_t> id = cluster().Submit(Sweep(6, "{cpus: 1}", "{cpus: 0.5}"));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, kCeilingMs);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_SUCCEEDED) << run->reason();
  for (const v1::Stage& s : run->stages()) {
    if (s.name().rfind("server-", 0) == 0) {
      EXPECT_EQ(s.status(), v1::STAGE_STOPPED) << s.name() << ": " << s.reason();
    } else {
      EXPECT_EQ(s.status(), v1::STAGE_SUCCEEDED) << s.name() << ": " << s.reason();
    }
  }
}

TEST_F(ServiceRoomTest, ServersAndConsumersEachNeedingAGpuFinishWithMoreItemsThanGpus) {
  ClusterOptions o;
  o.cpus = 4;
  o.gpus = 2;
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  Result<int64_t> id = cluster().Submit(Sweep(5, "{cpus: 0.5, gpus: 1}", "{cpus: 0.5, gpus: 1}"));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, kCeilingMs);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_SUCCEEDED) << run->reason();
}

TEST_F(ServiceRoomTest, AServerThatCanNeverFitBesideItsConsumerIsRefusedAtSubmit) {
  ClusterOptions o;
  o.cpus = 4;
  o.gpus = 1;
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  Result<int64_t> id = cluster().Submit(Sweep(2, "{cpus: 0.5, gpus: 1}", "{cpus: 0.5, gpus: 1}"));
  ASSERT_FALSE(id.ok());
  EXPECT_THAT(std::string(id.status().message()),
              ::testing::HasSubstr("with the services it needs, 'server-1' (0.5 cpus, 1 GPUs), "
                                   "which must run beside it, can never fit on the registered "
                                   "agents"));
}

// A consumer wanted only after its service started (a2 needs t, which needs the whole agent):
// the admission rule cannot foresee it, so the backstop stops the serving `a` to let t run.
// Why it was stopped is the stopped attempt's reason, stored with the run: `longhaul show RUN
// --attempts` prints it, after a restart of longhauld too.
TEST_F(ServiceRoomTest, AServiceStoppedToFreeRoomSaysWhyInTheRunsAttempts) {
  ClusterOptions o;
  o.cpus = 2;
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  std::string testjob = BinPath("lh-testjob");
  std::string quick = YamlList({testjob, "--sleep", "0.1"});
  Result<int64_t> id = cluster().Submit(
      "name: late-consumer\n"
      "stages:\n"
      "  a:\n"
      "    kind: service\n"
      "    run: " +
      YamlList({testjob, "--ready", "--output", "endpoint=http://127.0.0.1:1"}) +
      "\n"
      "    resources: {cpus: 1}\n"
      "    retry: {limit: 0}\n"
      "  a1: {needs: [a], run: " +
      quick +
      ", resources: {cpus: 0.5}}\n"
      "  t: {needs: [a1], run: " +
      quick +
      ", resources: {cpus: 2}}\n"
      "  a2: {needs: [a, t], run: " +
      quick + ", resources: {cpus: 0.5}}\n");
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, kCeilingMs);
  ASSERT_TRUE(run.ok()) << run.status().message();
  // Its retry limit is 0: had the stop spent a retry, the run would have failed.
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  ASSERT_EQ(FindStage(*run, "a")->attempts_size(), 2) << DescribeRun(*run);

  ASSERT_TRUE(cluster().RestartCoordinator().ok());
  CommandResult show = cluster().Cli({"show", std::to_string(*id), "--attempts"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  // The row of a's first attempt: STAGE a, ATTEMPT 1, AGENT n0, STATE killed, then REASON.
  std::string stopped_line;
  for (const std::string& line : SplitLines(show.out)) {
    if (std::regex_search(line, std::regex("^a +1 +n0 +killed "))) stopped_line = line;
  }
  EXPECT_THAT(stopped_line,
              ::testing::HasSubstr("yielded: every ready stage waits for room that serving "
                                   "services hold, and no task runs; it frees 1 cpus on n0 and "
                                   "starts again when a consumer can run beside it (no retry "
                                   "spent)"))
      << show.out;
}

}  // namespace
}  // namespace longhaul::testing
