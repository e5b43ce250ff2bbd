// Placement with real daemons on three agents of different GPU counts (0, 2 and 8 fake GPUs)
// and labels: node_selector among three, the gang reservation of an 8-GPU stage against a
// stream of 1-GPU stages, data locality (after a stage that ran and after a cached one in a
// pivot; as a rule when the input's path is not under a --shared-path the agents declare), and a
// service reached from a dependent on another agent through the agents' --advertise-host. placement_test.cc has the two-agent basics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// n0: no GPU, zone a; n1: 2 GPUs, zone b; n2: 8 GPUs ("h200"), zone b. 16 CPUs each, so
// that CPUs never decide where a stage goes; `extra[i]` is appended to agent i's flags.
ClusterOptions ThreeAgents(const std::vector<std::vector<std::string>>& extra = {}) {
  ClusterOptions o;
  o.agents = 3;
  o.cpus = 16;
  o.per_agent_gpus = {0, 2, 8};
  o.per_agent_flags = {{"--label", "gpu=none", "--label", "zone=a"},
                       {"--label", "gpu=small", "--label", "zone=b"},
                       {"--label", "gpu=h200", "--label", "zone=b"}};
  for (size_t i = 0; i < extra.size() && i < o.per_agent_flags.size(); ++i) {
    o.per_agent_flags[i].insert(o.per_agent_flags[i].end(), extra[i].begin(), extra[i].end());
  }
  return o;
}

// A run: list for a stage that waits until `file` exists, then exits 0: the test ends it.
std::string UntilFileExists(const std::string& file) {
  return YamlList({"/bin/sh", "-c", "while [ ! -e \"$0\" ]; do sleep 0.05; done", file});
}

// How many GPUs of each agent `attempt_id` holds, as ListAgents shows them.
std::map<std::string, int> GpusHeldBy(Cluster& c, int64_t attempt_id) {
  std::map<std::string, int> held;
  Result<std::vector<v1::AgentInfo>> infos = c.ListAgents();
  EXPECT_TRUE(infos.ok()) << infos.status().message();
  if (!infos.ok()) return held;
  for (const v1::AgentInfo& a : *infos) {
    held[a.id()] = 0;
    for (const v1::GpuInfo& g : a.gpus()) held[a.id()] += g.attempt_id() == attempt_id ? 1 : 0;
  }
  return held;
}

bool Is(const v1::Run& r, const std::string& stage, v1::StageStatus status) {
  const v1::Stage* s = FindStage(r, stage);
  return s != nullptr && s->status() == status;
}

class Placement3Test : public ClusterTest {};

TEST_F(Placement3Test, NodeSelectorPicksTheOneMatchingAgentOfThree) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(ThreeAgents()));
  CommandResult agents = cluster().Cli({"agents"});
  ASSERT_EQ(agents.exit_code, 0) << agents.err;
  EXPECT_THAT(agents.out, HasSubstr("gpu=none,zone=a"));
  EXPECT_THAT(agents.out, HasSubstr("gpu=small,zone=b"));
  EXPECT_THAT(agents.out, HasSubstr("gpu=h200,zone=b"));

  std::string sleep = YamlList({BinPath("lh-testjob"), "--sleep", "60"});
  Result<int64_t> id = cluster().Submit(
      "name: labels3\nstages:\n" +
      StageYaml("zone_a", sleep, {}, {"node_selector: {zone: a}"}) +
      StageYaml("small", sleep, {}, {"node_selector: {gpu: small}"}) +
      // Two agents are in zone b; the GPU label leaves one.
      StageYaml("h200_b", sleep, {}, {"node_selector: {gpu: h200, zone: b}"}) +
      // zone b and 2 GPUs: n1 and n2 both could; n0 never (no GPU, zone a).
      StageYaml("two_gpus", sleep, {}, {"node_selector: {zone: b}", "resources: {gpus: 2}"}) +
      StageYaml("nowhere", sleep, {}, {"node_selector: {gpu: h200, zone: a}"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRun(*id, [](const v1::Run& r) {
    for (const char* s : {"zone_a", "small", "h200_b", "two_gpus"}) {
      if (!Is(r, s, v1::STAGE_RUNNING)) return false;
    }
    return true;
  });
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(FindStage(*run, "zone_a")->agent_id(), "n0");
  EXPECT_EQ(FindStage(*run, "small")->agent_id(), "n1");
  EXPECT_EQ(FindStage(*run, "h200_b")->agent_id(), "n2");
  EXPECT_NE(FindStage(*run, "two_gpus")->agent_id(), "n0");
  int64_t two = FindStage(*run, "two_gpus")->attempts(0).id();
  std::map<std::string, int> held = GpusHeldBy(cluster(), two);
  EXPECT_EQ(held[FindStage(*run, "two_gpus")->agent_id()], 2);
  EXPECT_EQ(held["n0"] + held["n1"] + held["n2"], 2) << "two GPUs of one agent";

  // No agent has both labels (n0 is zone a without the GPU; n2 the GPU in zone b).
  const v1::Stage* nowhere = FindStage(*run, "nowhere");
  EXPECT_EQ(nowhere->status(), v1::STAGE_READY);
  EXPECT_EQ(nowhere->reason(), "no agent matches node_selector {gpu: h200, zone: a}");
  CommandResult show = cluster().Cli({"show", std::to_string(*id)});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("no agent matches node_selector {gpu: h200, zone: a}"));
  CommandResult cancel = cluster().Cli({"cancel", std::to_string(*id)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  Result<v1::Run> ended = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(ended.ok()) << ended.status().message();
  EXPECT_EQ(ended->status(), v1::RUN_CANCELLED);
}

// The scheduler's rule (daemon/scheduler/dispatch.cc, "Gang reservation"): a stage asking for
// GPUs that finds no room holds back, on the agent it waits for, what it needs of what is free
// there, and dispatch passes visit the oldest ready stage first; so younger 1-GPU stages do not
// get the GPUs freed on that agent, and it starts once the stages already there end.
TEST_F(Placement3Test, AnEightGpuStageWaitsForTheEightGpuAgentAndIsNotStarved) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(ThreeAgents()));
  const std::string dir = cluster().dir().path();
  auto release = [&](const std::string& name) { WriteTextFile(dir + "/release-" + name, ""); };
  const std::string h200 = "node_selector: {gpu: h200}";
  const std::string one_gpu = "resources: {gpus: 1}";

  // Four 1-GPU stages hold 4 of n2's 8 GPUs.
  std::string early_yaml = "name: early\nstages:\n";
  for (int i = 0; i < 4; ++i) {
    early_yaml += StageYaml(StrCat("e", i), UntilFileExists(StrCat(dir, "/release-e", i)), {},
                            {h200, one_gpu});
  }
  Result<int64_t> early = cluster().Submit(early_yaml);
  ASSERT_TRUE(early.ok()) << early.status().message();
  ASSERT_TRUE(cluster()
                  .WaitForRun(*early,
                              [](const v1::Run& r) {
                                for (int i = 0; i < 4; ++i) {
                                  if (!Is(r, StrCat("e", i), v1::STAGE_RUNNING)) return false;
                                }
                                return true;
                              })
                  .ok());

  // The 8-GPU stage has no selector: n2 is the only agent with 8 GPUs at all.
  Result<int64_t> gang = cluster().Submit(
      "name: gang\nstages:\n" +
      StageYaml("all", UntilFileExists(dir + "/release-all"), {}, {"resources: {gpus: 8}"}));
  ASSERT_TRUE(gang.ok()) << gang.status().message();
  // Younger 1-GPU stages for n2, and a CPU-only one there. The pass that starts `cpu` has
  // offered l0 and l1 first (same run, lower index: oldest first), so once `cpu` runs, the
  // 1-GPU stages have had their chance at n2's 4 free GPUs.
  Result<int64_t> late = cluster().Submit(
      "name: late\nstages:\n" +
      StageYaml("l0", UntilFileExists(dir + "/release-late"), {}, {h200, one_gpu}) +
      StageYaml("l1", UntilFileExists(dir + "/release-late"), {}, {h200, one_gpu}) +
      StageYaml("cpu", UntilFileExists(dir + "/release-late"), {}, {h200}));
  ASSERT_TRUE(late.ok()) << late.status().message();
  Result<v1::Run> l = cluster().WaitForRun(
      *late, [](const v1::Run& r) { return Is(r, "cpu", v1::STAGE_RUNNING); });
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(FindStage(*l, "cpu")->agent_id(), "n2");
  EXPECT_EQ(FindStage(*l, "l0")->status(), v1::STAGE_READY) << "n2's free GPUs are reserved";
  EXPECT_EQ(FindStage(*l, "l1")->status(), v1::STAGE_READY);
  Result<v1::Run> g = cluster().GetRun(*gang);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(FindStage(*g, "all")->status(), v1::STAGE_READY);
  EXPECT_EQ(FindStage(*g, "all")->reason(), "waiting for an agent with 1 cpus, 8 GPUs free");

  // The early stages end one by one; the GPUs they free go to no younger stage. Each end is
  // dispatched in the batch that stores it, so once the stage shows succeeded, the pass that
  // could have started l0 or l1 has run.
  for (int i = 0; i < 3; ++i) {
    release(StrCat("e", i));
    ASSERT_TRUE(cluster()
                    .WaitForRun(*early, [&](const v1::Run& r) {
                      return Is(r, StrCat("e", i), v1::STAGE_SUCCEEDED);
                    })
                    .ok());
    Result<v1::Run> now = cluster().GetRun(*late);
    ASSERT_TRUE(now.ok());
    EXPECT_EQ(FindStage(*now, "l0")->status(), v1::STAGE_READY) << "after e" << i;
    EXPECT_EQ(FindStage(*now, "l1")->status(), v1::STAGE_READY) << "after e" << i;
  }
  release("e3");
  g = cluster().WaitForRun(*gang, [](const v1::Run& r) { return Is(r, "all", v1::STAGE_RUNNING); });
  ASSERT_TRUE(g.ok()) << g.status().message();
  const v1::Stage* all = FindStage(*g, "all");
  EXPECT_EQ(all->agent_id(), "n2");
  ASSERT_EQ(all->attempts_size(), 1);
  std::map<std::string, int> held = GpusHeldBy(cluster(), all->attempts(0).id());
  EXPECT_EQ(held["n2"], 8) << "every GPU of n2, by the one attempt";
  EXPECT_EQ(held["n0"] + held["n1"], 0);
  l = cluster().GetRun(*late);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(FindStage(*l, "l0")->status(), v1::STAGE_READY);

  // Then the small ones get n2 back.
  release("all");
  l = cluster().WaitForRun(*late, [](const v1::Run& r) {
    return Is(r, "l0", v1::STAGE_RUNNING) && Is(r, "l1", v1::STAGE_RUNNING);
  });
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(FindStage(*l, "l0")->agent_id(), "n2");
  release("late");
  for (int64_t id : {*early, *gang, *late}) {
    Result<v1::Run> end = cluster().WaitForRunEnd(id);
    ASSERT_TRUE(end.ok()) << end.status().message();
    EXPECT_EQ(end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*end);
  }
}

// An artifact is recorded with its node, and the stage that needs it runs there: on an idle
// cluster of equal agents it would otherwise go to n0 (ties go to the first agent). A pivot
// reuses the producer (cached) and its consumer runs where the cached artifact is.
TEST_F(Placement3Test, AConsumerRunsWhereItsInputIsAlsoAfterAPivotThatReusesIt) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(ThreeAgents()));
  std::string file = cluster().WriteFile(
      "locality.yaml",
      "name: locality\nparams: {label: one}\nstages:\n" +
          StageYaml("produce",
                    YamlList({BinPath("lh-testjob"), "--artifact", "model=model.bin", "--output",
                              "dir=${output_dir}"}),
                    {}, {"node_selector: {gpu: small}"}) +
          StageYaml("consume",
                    YamlList({"/bin/sh", "-c", "test -f \"$0/model.bin\" && echo \"$1\"",
                              "${produce.outputs.dir}", "${params.label}"}),
                    {"produce"}));
  int64_t first = CliRunToEnd({"submit", file});
  ASSERT_NE(first, 0);
  Result<v1::Run> run = cluster().GetRun(first);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const v1::Stage* produce = FindStage(*run, "produce");
  EXPECT_EQ(produce->agent_id(), "n1");
  ASSERT_EQ(produce->artifacts_size(), 1);
  EXPECT_EQ(produce->artifacts(0).agent_id(), "n1");
  EXPECT_THAT(produce->artifacts(0).path(),
              StartsWith(cluster().AgentStateDir(1) + "/data/runs/"));
  EXPECT_EQ(FindStage(*run, "consume")->agent_id(), "n1") << "its input is on n1";

  // The pivot changes only what `consume` gets: `produce` is reused, its artifact checked on
  // n1, and `consume` goes to n1 again.
  int64_t second = CliRunToEnd({"pivot", std::to_string(first), "--set", "label=two"});
  ASSERT_NE(second, 0);
  run = cluster().GetRun(second);
  ASSERT_TRUE(run.ok()) << run.status().message();
  produce = FindStage(*run, "produce");
  EXPECT_EQ(produce->status(), v1::STAGE_CACHED) << DescribeRun(*run);
  EXPECT_EQ(produce->cached_from_run_id(), first);
  EXPECT_EQ(produce->agent_id(), "n1") << "a cached stage's node is its artifacts'";
  const v1::Stage* consume = FindStage(*run, "consume");
  EXPECT_EQ(consume->status(), v1::STAGE_SUCCEEDED);
  EXPECT_EQ(consume->agent_id(), "n1") << "where the cached artifact is";
}

// Data locality as a rule. Each agent's data dir is under one directory, the stand-in for a
// cluster file system. `produce` writes model.bin on n1 and reports its dir; `hold` keeps 15 of
// n1's 16 CPUs; `consume` asks for 2 CPUs and reads the file.
//  - Without --shared-path, `consume` waits for n1, though n0 and n2 are idle, and says so;
//    it runs there once `hold` ends.
//  - When every agent declares that directory with --shared-path, `consume` runs at once on
//    another agent and reads the file there.
class DataLocalityTest : public Placement3Test {
 protected:
  void Start(bool shared) {
    std::vector<std::vector<std::string>> extra;
    for (int i = 0; i < 3; ++i) {
      std::string data = lustre_.Join(StrCat("n", i));
      ASSERT_EQ(mkdir(data.c_str(), 0755), 0) << data;
      extra.push_back({"--data-dir", data});
      if (shared) extra.back().insert(extra.back().end(), {"--shared-path", lustre_.path()});
    }
    ASSERT_NO_FATAL_FAILURE(StartCluster(ThreeAgents(extra)));
    release_ = cluster().dir().path() + "/release-hold";
    Result<int64_t> run = cluster().Submit(
        "name: rule\nstages:\n" +
        StageYaml("produce",
                  YamlList({BinPath("lh-testjob"), "--artifact", "model=model.bin", "--output",
                            "dir=${output_dir}"}),
                  {}, {"node_selector: {gpu: small}"}) +
        StageYaml("hold", UntilFileExists(release_), {},
                  {"node_selector: {gpu: small}", "resources: {cpus: 15}"}) +
        StageYaml("consume",
                  YamlList({"/bin/sh", "-c", "test -f \"$0/model.bin\"", "${produce.outputs.dir}"}),
                  {"produce"}, {"resources: {cpus: 2}"}));
    ASSERT_TRUE(run.ok()) << run.status().message();
    run_ = *run;
  }

  TempDir lustre_;
  std::string release_;
  int64_t run_ = 0;
};

TEST_F(DataLocalityTest, WithoutASharedPathTheConsumerWaitsForTheAgentWithItsInput) {
  ASSERT_NO_FATAL_FAILURE(Start(/*shared=*/false));
  Result<v1::Run> r = cluster().WaitForRun(run_, [](const v1::Run& r) {
    const v1::Stage* c = FindStage(r, "consume");
    return Is(r, "produce", v1::STAGE_SUCCEEDED) && c != nullptr &&
           c->reason().find(" on n1 ") != std::string::npos;
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  const v1::Stage* consume = FindStage(*r, "consume");
  EXPECT_EQ(consume->status(), v1::STAGE_READY);
  EXPECT_EQ(consume->reason(),
            "waiting for an agent with 2 cpus free on n1 (where the outputs it needs are)");
  EXPECT_TRUE(Is(*r, "hold", v1::STAGE_RUNNING));
  WriteTextFile(release_, "");
  Result<v1::Run> end = cluster().WaitForRunEnd(run_);
  ASSERT_TRUE(end.ok()) << end.status().message();
  EXPECT_EQ(end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*end);
  EXPECT_EQ(FindStage(*end, "consume")->agent_id(), "n1");
}

TEST_F(DataLocalityTest, UnderAPathEveryAgentSharesTheConsumerRunsElsewhereAtOnce) {
  ASSERT_NO_FATAL_FAILURE(Start(/*shared=*/true));
  Result<v1::Run> r = cluster().WaitForRun(
      run_, [](const v1::Run& r) { return Is(r, "consume", v1::STAGE_SUCCEEDED); });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(Is(*r, "hold", v1::STAGE_RUNNING)) << "n1 is still full";
  EXPECT_NE(FindStage(*r, "consume")->agent_id(), "n1");
  Result<std::vector<v1::AgentInfo>> agents = cluster().ListAgents();
  ASSERT_TRUE(agents.ok());
  for (const v1::AgentInfo& a : *agents) {
    EXPECT_THAT(a.shared_paths(), ::testing::ElementsAre(lustre_.path())) << a.id();
  }
  WriteTextFile(release_, "");
  Result<v1::Run> end = cluster().WaitForRunEnd(run_);
  ASSERT_TRUE(end.ok()) << end.status().message();
  EXPECT_EQ(end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*end);
}

// Services across nodes: with --advertise-host on the agents, lh-serve binds the address of
// the service's agent and reports it in its endpoint, so a dependent on another agent reaches
// it (the product's choice: dependents are not tied to the service's agent; placement only
// prefers it, as for any upstream stage, and here the selectors put them apart).
TEST_F(Placement3Test, AServiceOnOneAgentIsReachedFromADependentOnAnother) {
  // 127.0.0.0/8 is all loopback on Linux: each agent gets an address of its own.
  ASSERT_NO_FATAL_FAILURE(StartCluster(ThreeAgents({{"--advertise-host", "127.0.0.11"},
                                                    {"--advertise-host", "127.0.0.12"},
                                                    {"--advertise-host", "127.0.0.13"}})));
  std::string profiles = cluster().dir().Join("profiles");
  ASSERT_EQ(::mkdir(profiles.c_str(), 0755), 0);
  WriteTextFile(profiles + "/fake.yaml", StrCat(R"(name: fake
argv: [")", BinPath("lh-fake-engine"), R"(", --host, "${host}", --port, "${port}",
       --model-name, "${model}"]
defaults:
  model: fake-model
health: {path: /health, interval: 100ms, serving_interval: 200ms, serving_failures: 2}
probe: {api: chat, max_tokens: 1}
timeouts: {load: 20s, probe: 5s, stop_grace: 1s}
)"));
  // The dependent reads the endpoint's host and port, asks GET /health there (bash's
  // /dev/tcp: no client needed), and checks that the port is not open on 127.0.0.1 (the
  // service bound its agent's address, not every address).
  const std::string client_script =
      "hp=$(echo \"$0\" | sed 's|^http://||'); h=$(echo \"$hp\" | cut -d: -f1); "
      "p=$(echo \"$hp\" | cut -d: -f2); "
      "exec 3<>/dev/tcp/$h/$p || exit 3; "
      "printf 'GET /health HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n' >&3; "
      "read -r status <&3; exec 3<&-; "
      "if (exec 4<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then exit 4; fi; "
      "echo \"{\\\"output\\\": {\\\"name\\\": \\\"health\\\", \\\"value\\\": \\\"$(echo $status "
      "| tr -d '\\r')\\\"}}\" >> \"$LONGHAUL_EVENTS\"";
  Result<int64_t> id = cluster().Submit(
      "name: across\nstages:\n" +
      StageYaml("serve",
                YamlList({BinPath("lh-serve"), "--profile", "fake", "--profiles-dir", profiles,
                          "--log-dir", "."}),
                {}, {"kind: service", "node_selector: {gpu: small}"}) +
      StageYaml("client", YamlList({"/bin/bash", "-c", client_script, "${serve.outputs.endpoint}"}),
                {"serve"}, {"node_selector: {gpu: h200}", "retry: {limit: 0}"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, 30'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  const v1::Stage* serve = FindStage(*run, "serve");
  const v1::Stage* client = FindStage(*run, "client");
  EXPECT_EQ(serve->agent_id(), "n1");
  EXPECT_EQ(client->agent_id(), "n2");
  auto endpoint = serve->outputs().find("endpoint");
  ASSERT_NE(endpoint, serve->outputs().end());
  EXPECT_THAT(endpoint->second, StartsWith("http://127.0.0.12:")) << "n1's advertised address";
  auto health = client->outputs().find("health");
  ASSERT_NE(health, client->outputs().end()) << DescribeRun(*run);
  EXPECT_THAT(health->second, StartsWith("HTTP/1.1 200"));
}

}  // namespace
}  // namespace longhaul::testing
