// SlurmRunner's pure parts: the batch script, the sbatch command line, and parsing what
// squeue and sbatch print. Against a real Slurm: tests/slurm/.
#include "agent/lib/slurm_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "agent/lib/slurm_classes.h"
#include "core/fs.h"
#include "core/strings.h"
#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

RunRequest Request() {
  RunRequest r;
  r.attempt_id = 7;
  r.attempt_dir = "/state/attempts/7";
  r.shim.program = "/bin/longhaul-shim";
  r.shim.args = {"--dir", "/state/attempts/7", "--", "echo", "it's"};
  r.shim.env = {"PATH=/bin", "X=a b"};
  r.resources.set_cpus(1.5);
  r.resources.set_memory_bytes(3 << 20);
  r.resources.set_gpus(2);
  r.timeout_ms = 90'000;
  r.grace_ms = 10'000;
  return r;
}

TEST(SlurmRunnerTest, ScriptExecsTheShimWithExactlyTheStageEnvironment) {
  std::string s = SlurmRunner::BatchScript(Request());
  EXPECT_THAT(s, HasSubstr("exec /usr/bin/env -i \"SLURM_JOB_ID=$SLURM_JOB_ID\""));
  EXPECT_THAT(s, HasSubstr("'X=a b'"));
  EXPECT_THAT(s, HasSubstr("'/bin/longhaul-shim' '--dir' '/state/attempts/7' '--' 'echo' "
                           "'it'\\''s'"));
}

TEST(SlurmRunnerTest, ScriptKeepsSlurmsGpusWhenTheJobAsksSlurmForThem) {
  RunRequest r = Request();
  r.shim.env.push_back("CUDA_VISIBLE_DEVICES=0,1");  // the coordinator's count, not devices
  std::string agents = SlurmRunner::BatchScript(r);
  EXPECT_THAT(agents, HasSubstr("'CUDA_VISIBLE_DEVICES=0,1'"));
  EXPECT_THAT(agents, Not(HasSubstr("$CUDA_VISIBLE_DEVICES")));
  std::string slurms = SlurmRunner::BatchScript(r, /*slurm_gpus=*/true);
  EXPECT_THAT(slurms, Not(HasSubstr("'CUDA_VISIBLE_DEVICES=0,1'")));
  EXPECT_THAT(slurms,
              HasSubstr("${CUDA_VISIBLE_DEVICES+\"CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"}"));
  EXPECT_THAT(slurms, HasSubstr("'X=a b'"));
}

TEST(SlurmRunnerTest, ServicesAdvertiseTheComputeNodeNotTheAgents) {
  RunRequest r = Request();
  EXPECT_THAT(SlurmRunner::BatchScript(r), Not(HasSubstr("LONGHAUL_ADVERTISE_HOST")));
  r.shim.env.push_back("LONGHAUL_ADVERTISE_HOST=login1");
  std::string s = SlurmRunner::BatchScript(r);
  EXPECT_THAT(s, Not(HasSubstr("login1")));
  EXPECT_THAT(s, HasSubstr("\"LONGHAUL_ADVERTISE_HOST=$(hostname)\""));
}

TEST(SlurmRunnerTest, SbatchArguments) {
  SlurmOptions o;
  o.partition = "low";
  o.signal_lead_s = 30;
  auto args = SlurmRunner(o).SbatchArgs(Request());
  EXPECT_THAT(args, Contains("--job-name=lh-7"));
  EXPECT_THAT(args, Contains("--no-requeue"));
  EXPECT_THAT(args, Contains("--signal=B:USR1@30"));
  EXPECT_THAT(args, Contains("--cpus-per-task=2"));
  EXPECT_THAT(args, Contains("--mem=3M"));
  EXPECT_THAT(args, Contains("--time=3"));  // 90 s + 10 s grace + 30 s lead, in minutes
  EXPECT_THAT(args, Contains("--partition=low"));
  EXPECT_THAT(args, Not(Contains("--gres=gpu:2"))) << "no GPUs as gres unless told";
  EXPECT_EQ(args.back(), "/state/attempts/7/job.sh");
  EXPECT_THAT(args, Not(Contains(::testing::StartsWith("--exclude"))));
  RunRequest failed_before = Request();
  failed_before.exclude_nodes = {"gpu-a1", "gpu-b[3-4]"};
  EXPECT_THAT(SlurmRunner(o).SbatchArgs(failed_before), Contains("--exclude=gpu-a1,gpu-b[3-4]"));
  o.gres_gpus = true;
  EXPECT_THAT(SlurmRunner(o).SbatchArgs(Request()), Contains("--gres=gpu:2"));
}

TEST(SlurmRunnerTest, APriorityClassPicksItsQosAndPartition) {
  SlurmOptions o;
  o.partition = "gpu";
  o.class_qos = {{"high", "urgent"}, {"low", "scavenger"}};
  o.class_partition = {{"high", "gpu-prio"}};
  SlurmRunner runner(o);
  RunRequest r = Request();
  r.priority = "high";
  auto high = runner.SbatchArgs(r);
  EXPECT_THAT(high, Contains("--qos=urgent"));
  EXPECT_THAT(high, Contains("--partition=gpu-prio"));
  EXPECT_THAT(high, Not(Contains("--partition=gpu"))) << "one --partition, the class's";
  r.priority = "low";
  auto low = runner.SbatchArgs(r);
  EXPECT_THAT(low, Contains("--qos=scavenger"));
  EXPECT_THAT(low, Contains("--partition=gpu")) << "low has no partition of its own";
  // A class without a mapping, and an attempt from a coordinator that sends no class, submit
  // as before.
  for (const char* klass : {"normal", ""}) {
    r.priority = klass;
    auto args = runner.SbatchArgs(r);
    EXPECT_THAT(args, Not(Contains(::testing::StartsWith("--qos")))) << klass;
    EXPECT_THAT(args, Contains("--partition=gpu")) << klass;
  }
  SlurmRunner plain({});
  r.priority = "high";
  EXPECT_THAT(plain.SbatchArgs(r), Not(Contains(::testing::StartsWith("--qos"))));
  EXPECT_THAT(plain.SbatchArgs(r), Not(Contains(::testing::StartsWith("--partition"))));
}

TEST(SlurmClassesTest, ParsesClassMapsAndNamesWhatIsWrong) {
  auto m = ParseSlurmClassMap({"high=urgent, low=scavenger", "normal=standard"});
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(*m, (std::map<std::string, std::string>{
                    {"high", "urgent"}, {"low", "scavenger"}, {"normal", "standard"}}));
  EXPECT_TRUE(ParseSlurmClassMap({})->empty());
  auto error = [](std::vector<std::string> v) {
    return std::string(ParseSlurmClassMap(v).status().message());
  };
  EXPECT_EQ(error({"high"}), "'high': expected CLASS=NAME, such as high=urgent");
  EXPECT_EQ(error({"urgent=x"}), "'urgent=x': unknown class 'urgent' (high, normal or low)");
  EXPECT_EQ(error({"high="}), "'high=': expected a Slurm name after 'high='");
  EXPECT_EQ(error({"high=a", "high=b"}), "'high=b': class high is already mapped to 'a'");
  EXPECT_TRUE(CheckSlurmClassArgs({"--exclusive"}, "--qos", "-q").ok());
  Status both = CheckSlurmClassArgs({"--qos=long"}, "--qos", "-q");
  EXPECT_EQ(both.message(),
            "--slurm-arg=--qos=long sets --qos for every job; map the classes, or pass it to "
            "sbatch, not both");
  EXPECT_FALSE(CheckSlurmClassArgs({"-pdebug"}, "--partition", "-p").ok());
}

TEST(SlurmRunnerTest, ParsesSqueueAndSbatch) {
  auto m = ParseSqueue("12|PENDING|Resources\n13|RUNNING|None\n14|PREEMPTED|None\ngarbage\n");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m["12"].phase, NativePhase::kPending);
  EXPECT_EQ(m["12"].reason, "Resources");
  EXPECT_EQ(m["13"].phase, NativePhase::kRunning);
  EXPECT_EQ(m["13"].reason, "");
  EXPECT_EQ(m["14"].phase, NativePhase::kEnded);
  EXPECT_EQ(m["14"].node, "");
  auto with_node = ParseSqueue("15|NODE_FAIL|None|gpu-a1\n16|PENDING|Priority|\n");
  EXPECT_EQ(with_node["15"].node, "gpu-a1");
  EXPECT_EQ(with_node["15"].state, "NODE_FAIL");
  EXPECT_EQ(with_node["16"].node, "");
  // lh-7 of another coordinator (its own dir) is not this agent's attempt 7.
  EXPECT_EQ(JobInDir("30|/other/attempts/7\n31|/state/attempts/7\n", "/state/attempts/7"), "31");
  EXPECT_EQ(JobInDir("30|/other/attempts/7\n", "/state/attempts/7"), "");
  EXPECT_EQ(*ParseSbatch("123\n"), "123");
  EXPECT_EQ(*ParseSbatch("124;cluster\n"), "124");
  EXPECT_FALSE(ParseSbatch("sbatch: error: oops").ok());
  EXPECT_EQ(SlurmPhase("CONFIGURING"), NativePhase::kPending);
  EXPECT_EQ(SlurmPhase("WHATEVER"), NativePhase::kUnknown);
}

// sacct -n -P -X -o JobID,State,NodeList,Reason, in the format of 22.05's man page (the
// local test cluster keeps no accounting, so these lines are not recorded from it).
TEST(SlurmRunnerTest, ParsesSacct) {
  auto m = ParseSacct(
      "40|COMPLETED|vm|None\n41|CANCELLED by 0|vm|None\n42|NODE_FAIL|gpu-a1|None\n"
      "43|PENDING|None assigned|Resources\n44|TIMEOUT|vm|None\nnot a line\n");
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m["40"].phase, NativePhase::kEnded);
  EXPECT_EQ(m["41"].state, "CANCELLED");
  EXPECT_EQ(m["42"].node, "gpu-a1");
  EXPECT_EQ(m["43"].phase, NativePhase::kPending);
  EXPECT_EQ(m["43"].node, "");
  EXPECT_EQ(m["43"].reason, "Resources");
  EXPECT_EQ(m["44"].reason, "");
  EXPECT_TRUE(ParseSacct("").empty());
}

// What 22.05's commands printed on the local cluster (deploy/slurm-local.sh): sacct with
// AccountingStorageType=accounting_storage/none, and every command while slurmctld was killed.
TEST(SlurmRunnerTest, TellsAccountingOffAndAnUnreachableControllerFromARefusal) {
  EXPECT_TRUE(SacctAccountingOff("Slurm accounting storage is disabled\n"));
  EXPECT_FALSE(
      SacctAccountingOff("sacct: error: Problem talking to the database: Connection refused"));
  EXPECT_TRUE(SlurmUnreachable(
      "sbatch: error: Batch job submission failed: Unable to contact slurm controller "
      "(connect failure)\n"));
  EXPECT_TRUE(
      SlurmUnreachable("slurm_load_jobs error: Unable to contact slurm controller (connect "
                       "failure)\n"));
  EXPECT_TRUE(SlurmUnreachable("squeue: error: Socket timed out on send/recv operation"));
  EXPECT_FALSE(SlurmUnreachable(
      "sbatch: error: Batch job submission failed: Requested node configuration is not "
      "available"));
  EXPECT_FALSE(SlurmUnreachable("slurm_load_jobs error: Invalid job id specified"));
}

// Reconcile with squeue, sacct and scontrol replaced by scripts first on PATH (a unit test's
// double; against the real commands: tests/slurm/). Job 10 is in squeue, 11 in sacct only,
// 12 in scontrol only.
class ReconcileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Script("squeue", "echo '10|RUNNING|None|vm'");
    Script("sacct",
           StrCat("echo \"$*\" >> ", dir_.Join("sacct.calls"), "\n", "if [ -e ", dir_.Join("off"),
                  " ]; then\n",
                  // What 22.05's sacct printed on the local cluster, whose accounting is off.
                  "  echo 'Slurm accounting storage is disabled' >&2; exit 1\nfi\n",
                  "echo '11|COMPLETED|vm|None'"));
    Script("scontrol", StrCat("echo \"$4\" >> ", dir_.Join("scontrol.calls"), "\n",
                              "echo \"JobId=$4 JobName=lh-1 JobState=TIMEOUT Reason=TimeLimit "
                              "NodeList=vm\""));
    old_path_ = std::getenv("PATH");
    ::setenv("PATH", StrCat(dir_.path(), ":", old_path_).c_str(), 1);
  }
  void TearDown() override { ::setenv("PATH", old_path_.c_str(), 1); }

  void Script(const std::string& name, const std::string& body) {
    std::ofstream(dir_.Join(name)) << "#!/bin/sh\n" << body << "\n";
    ::chmod(dir_.Join(name).c_str(), 0755);
  }
  std::vector<std::string> Calls(const std::string& name) {
    auto text = ReadFile(dir_.Join(name + ".calls"));
    std::vector<std::string> lines;
    for (const auto& l : StrSplit(text.ok() ? *text : "", '\n')) {
      if (!l.empty()) lines.push_back(l);
    }
    return lines;
  }

  testing::TempDir dir_;
  std::string old_path_;
};

TEST_F(ReconcileTest, OneSacctForAllGoneJobsThenScontrolForTheRest) {
  SlurmRunner runner({});
  auto states = runner.Reconcile({"10", "11", "12"});
  ASSERT_TRUE(states.ok()) << states.status().message();
  EXPECT_EQ((*states)["10"].state, "RUNNING");
  EXPECT_EQ((*states)["11"].state, "COMPLETED");
  EXPECT_EQ((*states)["12"].state, "TIMEOUT");
  EXPECT_EQ((*states)["12"].node, "vm");
  EXPECT_THAT(Calls("sacct"), ::testing::ElementsAre(HasSubstr("-j 11,12 ")));
  EXPECT_THAT(Calls("scontrol"), ::testing::ElementsAre("12"));
}

TEST_F(ReconcileTest, AccountingOffMeansScontrolOnlyFromThenOn) {
  std::ofstream(dir_.Join("off")) << "";
  SlurmRunner runner({});
  for (int i = 0; i < 3; ++i) {
    auto states = runner.Reconcile({"10", "11", "12"});
    ASSERT_TRUE(states.ok()) << states.status().message();
    EXPECT_EQ((*states)["11"].state, "TIMEOUT") << "from scontrol";
    EXPECT_EQ((*states)["12"].state, "TIMEOUT");
  }
  EXPECT_EQ(Calls("sacct").size(), 1u) << "asked once, then never again";
  EXPECT_EQ(Calls("scontrol").size(), 6u);
}

TEST_F(ReconcileTest, CancelsGoInBatchesOfTwoHundredJobs) {
  Script("scancel", StrCat("echo \"$*\" >> ", dir_.Join("scancel.calls")));
  SlurmRunner runner({});
  std::vector<std::string> ids;
  for (int i = 1; i <= 450; ++i) ids.push_back(std::to_string(i));
  ASSERT_TRUE(runner.CancelMany(ids, /*running=*/false).ok());
  ASSERT_TRUE(runner.CancelMany({"7", "8"}, /*running=*/true).ok());
  std::vector<std::string> calls = Calls("scancel");
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_THAT(calls[0], ::testing::StartsWith("1 2 3 "));
  EXPECT_THAT(calls[0], ::testing::EndsWith(" 199 200"));
  EXPECT_THAT(calls[2], ::testing::StartsWith("401 "));
  EXPECT_THAT(calls[2], ::testing::EndsWith(" 450"));
  EXPECT_EQ(calls[3], "--batch --signal=USR1 7 8");
  // A job that ended meanwhile: scancel complains, the cancel of the others stands.
  Script("scancel",
         "echo 'scancel: error: Kill job error on job id 9: Invalid job id' >&2; exit 1");
  EXPECT_FALSE(runner.CancelMany({"9", "10"}, false).ok());
}

// What `scontrol -o show partition` printed on the local cluster (deploy/slurm-local.sh),
// shortened; plus a 1-day partition.
constexpr char kPartitions[] =
    "PartitionName=low AllowGroups=ALL Default=YES QoS=N/A DefaultTime=NONE MaxNodes=UNLIMITED "
    "MaxTime=UNLIMITED MinNodes=0 Nodes=vm State=UP\n"
    "PartitionName=short AllowGroups=ALL Default=NO QoS=N/A DefaultTime=00:01:00 "
    "MaxNodes=UNLIMITED MaxTime=00:01:00 MinNodes=0 Nodes=vm State=UP\n"
    "PartitionName=day AllowGroups=ALL Default=NO MaxTime=1-00:00:00 Nodes=vm State=UP\n";

TEST(SlurmPartitionsTest, ParsesMaxTimes) {
  EXPECT_EQ(ParseSlurmMinutes("00:01:00"), 1);
  EXPECT_EQ(ParseSlurmMinutes("1-00:00:00"), 24 * 60);
  EXPECT_EQ(ParseSlurmMinutes("2-03:04:59"), 2 * 24 * 60 + 3 * 60 + 4);
  EXPECT_EQ(ParseSlurmMinutes("1-12"), 36 * 60);
  EXPECT_EQ(ParseSlurmMinutes("30"), 30);
  EXPECT_EQ(ParseSlurmMinutes("30:59"), 30);
  EXPECT_EQ(ParseSlurmMinutes("UNLIMITED"), std::nullopt);
  EXPECT_EQ(ParseSlurmMinutes("INFINITE"), std::nullopt);
  EXPECT_EQ(ParseSlurmMinutes(""), std::nullopt);
  EXPECT_EQ(ParseSlurmMinutes("1:2:3:4"), std::nullopt);
  SlurmPartitions p = ParsePartitions(kPartitions);
  EXPECT_EQ(p.default_partition, "low");
  EXPECT_EQ(p.MaxMinutes("short"), 1);
  EXPECT_EQ(p.MaxMinutes("day"), 24 * 60);
  EXPECT_EQ(p.MaxMinutes(""), std::nullopt) << "the default, low, is unlimited";
  EXPECT_EQ(p.MaxMinutes("nosuch"), std::nullopt);
}

std::string TimeArg(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a.rfind("--time=", 0) == 0) return a;
  }
  return "";
}

TEST_F(ReconcileTest, TimeIsCappedAtThePartitionsMaxTime) {
  Script("scontrol",
         StrCat("echo \"$*\" >> ", dir_.Join("scontrol.calls"), "\n", "[ -e ", dir_.Join("down"),
                " ] && { echo 'slurm_load_partitions: "
                "Unable to contact slurm controller (connect failure)' >&2; exit 1; }\n",
                "printf '", kPartitions, "'"));
  RunRequest r = Request();
  r.timeout_ms = 3 * 24 * 3600'000LL;  // a 3-day stage
  SlurmOptions day;
  day.partition = "day";
  SlurmRunner on_day(day);
  EXPECT_EQ(TimeArg(on_day.SbatchArgs(r)), "--time=4322") << "no limit known yet";
  on_day.RefreshPartitions();
  EXPECT_EQ(TimeArg(on_day.SbatchArgs(r)), "--time=1440") << "capped at 1 day";
  on_day.RefreshPartitions();
  EXPECT_THAT(Calls("scontrol"), ::testing::ElementsAre("-o show partition"))
      << "read again only after 10 minutes";
  r.timeout_ms = 60'000;
  EXPECT_EQ(TimeArg(on_day.SbatchArgs(r)), "--time=3") << "under the limit: 1 min + grace + lead";

  SlurmRunner on_default({});  // low, unlimited
  on_default.RefreshPartitions();
  r.timeout_ms = 3 * 24 * 3600'000LL;
  EXPECT_EQ(TimeArg(on_default.SbatchArgs(r)), "--time=4322");

  // A class mapped to a partition is capped at that partition's MaxTime.
  SlurmOptions by_class;
  by_class.class_partition = {{"low", "day"}, {"high", "short"}};
  SlurmRunner on_class(by_class);
  on_class.RefreshPartitions();
  r.priority = "low";
  EXPECT_EQ(TimeArg(on_class.SbatchArgs(r)), "--time=1440") << "low runs on day";
  r.priority = "high";
  EXPECT_EQ(TimeArg(on_class.SbatchArgs(r)), "--time=1") << "high runs on short";
  r.priority = "normal";
  EXPECT_EQ(TimeArg(on_class.SbatchArgs(r)), "--time=4322") << "normal runs on low, unlimited";
  r.priority = "";

  std::ofstream(dir_.Join("down")) << "";
  SlurmOptions short_options;
  short_options.partition = "short";
  SlurmRunner unreachable(short_options);
  unreachable.RefreshPartitions();  // fails: no cap, no crash
  EXPECT_EQ(TimeArg(unreachable.SbatchArgs(r)), "--time=4322");
}

}  // namespace
}  // namespace longhaul::agent
