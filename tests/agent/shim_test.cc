// longhaul-shim as a real process: what it records, how it cancels, and that its stage
// outlives whoever launched it.
#include "agent/shim/shim.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "agent/shim/leftovers.h"
#include "agent/shim/shim_files.h"
#include "core/fs.h"
#include "core/json_string.h"
#include "core/strings.h"
#include "tests/agent/cgroup_test_util.h"
#include "tests/testing/test_util.h"

extern char** environ;

namespace longhaul::shim {
namespace {

using nlohmann::json;
using testing::BinPath;
using testing::ProcessAlive;
using testing::ReadTextFile;
using testing::WaitFor;
using testing::WriteTextFile;

// The shim must not be a process group leader (it calls setsid), so it is spawned plainly
// rather than through testing::Subprocess.
class ShimProcess {
 public:
  explicit ShimProcess(const std::vector<std::string>& argv,
                       const std::vector<std::string>& extra_env = {}) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> cargs, cenv;
    for (const auto& a : argv) cargs.push_back(const_cast<char*>(a.c_str()));
    cargs.push_back(nullptr);
    for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    rc_ = ::posix_spawn(&pid_, cargs[0], nullptr, nullptr, cargs.data(), cenv.data());
  }
  ~ShimProcess() {
    if (rc_ == 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return rc_ == 0; }
  pid_t pid() const { return pid_; }
  std::optional<int> Wait(int64_t timeout_ms) {
    WaitFor(
        [&] {
          int st;
          if (::waitpid(pid_, &st, WNOHANG) == pid_) status_ = st;
          return status_.has_value();
        },
        timeout_ms);
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int rc_ = -1;
  std::optional<int> status_;
};

class ShimTest : public ::testing::Test {
 protected:
  std::vector<std::string> ShimArgv(const std::vector<std::string>& stage,
                                    int64_t grace_ms = 10'000) {
    std::vector<std::string> argv = {BinPath("longhaul-shim"), "--dir", dir_.path(), "--grace-ms",
                                     std::to_string(grace_ms), "--"};
    argv.insert(argv.end(), stage.begin(), stage.end());
    return argv;
  }
  std::vector<std::string> Env() {
    return {"LONGHAUL_WORK_DIR=" + dir_.Join("work"), "LONGHAUL_OUTPUT_DIR=" + dir_.Join("out"),
            "LONGHAUL_EVENTS=" + dir_.Join("events.jsonl")};
  }
  void SetUp() override {
    ::mkdir(dir_.Join("work").c_str(), 0755);
    ::mkdir(dir_.Join("out").c_str(), 0755);
  }
  json ReadJson(const std::string& name) {
    std::string text = ReadTextFile(dir_.Join(name));
    return text.empty() ? json() : json::parse(text);
  }
  bool Has(const std::string& name) { return !ReadTextFile(dir_.Join(name)).empty(); }
  std::vector<pid_t> ChildPids() {
    std::vector<pid_t> out;
    std::istringstream in(ReadTextFile(dir_.Join("work/children.pids")));
    std::string line;
    while (std::getline(in, line)) out.push_back(std::stoi(line));
    return out;
  }
  testing::TempDir dir_;
};

TEST_F(ShimTest, RecordsExitCodeOutputAndPids) {
  ShimProcess shim(
      ShimArgv({BinPath("lh-testjob"), "--print", "hello", "--stderr", "err", "--exit", "3"}),
      Env());
  ASSERT_TRUE(shim.started());
  auto st = shim.Wait(10'000);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(WEXITSTATUS(*st), 3);
  json exit = ReadJson("exit.json");
  EXPECT_EQ(exit["exit_code"], 3);
  EXPECT_EQ(exit["signal"], 0);
  EXPECT_EQ(exit["start_failed"], false);
  EXPECT_EQ(exit["reason"], "");
  json pid = ReadJson("pid.json");
  EXPECT_EQ(pid["shim_pid"], shim.pid());
  EXPECT_GT(pid["stage_pid"].get<int>(), 0);
  EXPECT_GT(pid["stage_start"].get<int64_t>(), 0);
  EXPECT_LE(pid["started_at_ms"].get<int64_t>(), exit["ended_at_ms"].get<int64_t>());
  EXPECT_EQ(ReadTextFile(dir_.Join("stdout.log")), "hello\n");
  EXPECT_EQ(ReadTextFile(dir_.Join("stderr.log")), "err\n");
}

TEST_F(ShimTest, StageRunsInTheOutputDir) {
  ShimProcess shim(ShimArgv({"/bin/sh", "-c", "pwd"}), Env());
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  EXPECT_EQ(ReadTextFile(dir_.Join("stdout.log")), dir_.Join("out") + "\n");
}

TEST_F(ShimTest, RecordsTheSignalThatKilledTheStage) {
  ShimProcess shim(ShimArgv({BinPath("lh-testjob"), "--sleep", "60"}), Env());
  ASSERT_TRUE(WaitFor([&] { return Has("pid.json"); }, 10'000));
  ::kill(ReadJson("pid.json")["stage_pid"].get<pid_t>(), SIGKILL);
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  json exit = ReadJson("exit.json");
  EXPECT_EQ(exit["signal"], SIGKILL);
  EXPECT_EQ(exit["exit_code"], 128 + SIGKILL);
  EXPECT_EQ(exit["reason"], "");
}

TEST_F(ShimTest, MissingProgramIsNotFound) {
  ShimProcess shim(ShimArgv({"lh-no-such-program", "--x"}), Env());
  auto st = shim.Wait(10'000);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(WEXITSTATUS(*st), 127);
  json exit = ReadJson("exit.json");
  EXPECT_EQ(exit["exit_code"], 127);
  EXPECT_EQ(exit["start_failed"], true);
  EXPECT_EQ(exit["reason"], "not found: lh-no-such-program");
  EXPECT_FALSE(Has("pid.json"));
}

TEST_F(ShimTest, NonExecutableFileIsPermissionDenied) {
  std::string script = dir_.Join("script.sh");
  WriteTextFile(script, "#!/bin/sh\necho hi\n");
  ::chmod(script.c_str(), 0644);
  ShimProcess shim(ShimArgv({script}), Env());
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  EXPECT_EQ(ReadJson("exit.json")["reason"], "permission denied: " + script);
}

TEST_F(ShimTest, MissingOutputDirIsAStartFailure) {
  ShimProcess shim(ShimArgv({BinPath("lh-testjob")}),
                   {"LONGHAUL_OUTPUT_DIR=" + dir_.Join("absent")});
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  json exit = ReadJson("exit.json");
  EXPECT_EQ(exit["start_failed"], true);
  EXPECT_NE(exit["reason"].get<std::string>().find("cannot enter output dir"), std::string::npos);
}

TEST_F(ShimTest, CancelEscalatesToSigkillForAStageThatIgnoresSigterm) {
  ShimProcess shim(ShimArgv({BinPath("lh-testjob"), "--ignore-sigterm", "--sleep", "60"}), Env());
  ASSERT_TRUE(WaitFor([&] { return Has("pid.json"); }, 10'000));
  // --ignore-sigterm takes effect once the stage runs; its pid file would race, so the test
  // waits until SIGTERM is ignored according to /proc.
  pid_t stage = ReadJson("pid.json")["stage_pid"].get<pid_t>();
  ASSERT_TRUE(WaitFor(
      [&] {
        std::string status = ReadTextFile("/proc/" + std::to_string(stage) + "/status");
        auto pos = status.find("SigIgn:");
        return pos != std::string::npos &&
               (std::stoull(status.substr(pos + 7), nullptr, 16) & (1ull << (SIGTERM - 1))) != 0;
      },
      10'000));
  WriteTextFile(dir_.Join("cancel.json"), R"({"reason":"timeout","grace_ms":200})");
  ::kill(shim.pid(), SIGTERM);
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  json exit = ReadJson("exit.json");
  EXPECT_EQ(exit["signal"], SIGKILL);
  EXPECT_EQ(exit["reason"], "timeout");
  EXPECT_FALSE(ProcessAlive(stage));
}

TEST_F(ShimTest, CancelStopsACooperativeStageWithSigterm) {
  ShimProcess shim(ShimArgv({BinPath("lh-testjob"), "--sleep", "60"}), Env());
  ASSERT_TRUE(WaitFor([&] { return Has("pid.json"); }, 10'000));
  WriteTextFile(dir_.Join("cancel.json"), R"({"reason":"cancelled","grace_ms":60000})");
  ::kill(shim.pid(), SIGTERM);
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  json exit = ReadJson("exit.json");
  EXPECT_EQ(exit["signal"], SIGTERM);
  EXPECT_EQ(exit["reason"], "cancelled");
}

TEST_F(ShimTest, Usr1IsACancelThatTheStageNeverGets) {
  // Slurm's warning before its time limit (no cancel.json): the stage is stopped with SIGTERM,
  // not USR1, and exit.json says why.
  ShimProcess shim(ShimArgv({BinPath("lh-testjob"), "--sleep", "60"}), Env());
  ASSERT_TRUE(WaitFor([&] { return Has("pid.json"); }, 10'000));
  ::kill(shim.pid(), SIGUSR1);
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  json exit = ReadJson("exit.json");
  EXPECT_EQ(exit["signal"], SIGTERM);
  EXPECT_EQ(exit["reason"], shim::kTimeLimitReason);
}

TEST_F(ShimTest, CancelKillsTheWholeProcessGroup) {
  ShimProcess shim(ShimArgv({BinPath("lh-testjob"), "--spawn-children", "3", "--sleep", "60"}),
                   Env());
  ASSERT_TRUE(WaitFor([&] { return ChildPids().size() == 3; }, 10'000));
  auto children = ChildPids();
  for (pid_t c : children) EXPECT_TRUE(ProcessAlive(c));
  WriteTextFile(dir_.Join("cancel.json"), R"({"reason":"cancelled","grace_ms":5000})");
  ::kill(shim.pid(), SIGTERM);
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  for (pid_t c : children) EXPECT_FALSE(ProcessAlive(c)) << c;
}

TEST_F(ShimTest, LeftoverChildrenDieWhenTheStageExits) {
  ShimProcess shim(ShimArgv({BinPath("lh-testjob"), "--spawn-children", "2"}), Env());
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  auto children = ChildPids();
  ASSERT_EQ(children.size(), 2u);
  for (pid_t c : children) EXPECT_FALSE(ProcessAlive(c)) << c;
  EXPECT_EQ(ReadJson("exit.json")["exit_code"], 0);
}

// A stage that leaves a `setsid` helper and a double-forked daemon (its intermediate process
// exits, so the daemon is re-parented to the shim), both in sessions of their own, then runs
// `then`. Their pids are in work/setsid.pid and work/daemon.pid.
std::vector<std::string> StageLeavingDetachedProcesses(const std::string& work,
                                                       const std::string& then) {
  std::string script = "setsid sh -c 'echo $$ > " + work + "/setsid.tmp; mv " + work +
                       "/setsid.tmp " + work +
                       "/setsid.pid; exec sleep 1000' & "
                       "( setsid sh -c 'echo $$ > " +
                       work + "/daemon.tmp; mv " + work + "/daemon.tmp " + work +
                       "/daemon.pid; exec sleep 1000' & ); "
                       "while [ ! -e " +
                       work + "/setsid.pid ] || [ ! -e " + work +
                       "/daemon.pid ]; do "
                       "sleep 0.01; done; " +
                       then;
  return {"/bin/sh", "-c", script};
}

class ShimLeftoversTest : public ShimTest {
 protected:
  pid_t PidIn(const std::string& name) {
    std::string text = ReadTextFile(dir_.Join("work/" + name));
    return text.empty() ? 0 : static_cast<pid_t>(std::stoi(text));
  }
  // Both detached processes ran, and none is left now that the shim has exited.
  void ExpectBothGone() {
    pid_t helper = PidIn("setsid.pid"), daemon = PidIn("daemon.pid");
    ASSERT_GT(helper, 0);
    ASSERT_GT(daemon, 0);
    EXPECT_FALSE(ProcessAlive(helper)) << helper;
    EXPECT_FALSE(ProcessAlive(daemon)) << daemon;
  }
  // Runs the shim `argv` on a stage that leaves both and sleeps, cancels it once both run, and
  // expects the cancel's reason and both gone.
  void CancelAndExpectBothGone(const std::vector<std::string>& argv) {
    ShimProcess shim(argv, Env());
    ASSERT_TRUE(
        WaitFor([&] { return PidIn("daemon.pid") > 0 && PidIn("setsid.pid") > 0; }, 10'000));
    WriteTextFile(dir_.Join("cancel.json"), R"({"reason":"cancelled","grace_ms":5000})");
    ::kill(shim.pid(), SIGTERM);
    ASSERT_TRUE(shim.Wait(20'000).has_value());
    ExpectBothGone();
    EXPECT_EQ(ReadJson("exit.json")["reason"], "cancelled");
  }
};

TEST_F(ShimLeftoversTest, DetachedProcessesAreKilledWhenTheStageSucceeds) {
  ShimProcess shim(ShimArgv(StageLeavingDetachedProcesses(dir_.Join("work"), "exit 0")), Env());
  auto st = shim.Wait(20'000);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(WEXITSTATUS(*st), 0);
  ExpectBothGone();
  json exit = ReadJson("exit.json");
  EXPECT_EQ(exit["exit_code"], 0);
  EXPECT_EQ(exit["leftovers_killed"], 2);
  EXPECT_NE(
      ReadTextFile(dir_.Join("stderr.log")).find("2 processes outlived the stage and were killed"),
      std::string::npos);
}

TEST_F(ShimLeftoversTest, DetachedProcessesAreKilledWhenTheStageFails) {
  ShimProcess shim(ShimArgv(StageLeavingDetachedProcesses(dir_.Join("work"), "exit 3")), Env());
  ASSERT_TRUE(shim.Wait(20'000).has_value());
  ExpectBothGone();
  json exit = ReadJson("exit.json");
  EXPECT_EQ(exit["exit_code"], 3);
  EXPECT_EQ(exit["leftovers_killed"], 2);
}

TEST_F(ShimLeftoversTest, DetachedProcessesGetTheCancelAndAreGoneAfterIt) {
  CancelAndExpectBothGone(ShimArgv(StageLeavingDetachedProcesses(dir_.Join("work"), "sleep 60")));
}

TEST_F(ShimLeftoversTest, NothingLeftNothingSaid) {
  ShimProcess shim(ShimArgv({"/bin/sh", "-c", "exit 0"}), Env());
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  EXPECT_FALSE(ReadJson("exit.json").contains("leftovers_killed"));
}

TEST_F(ShimLeftoversTest, AnUnusableCgroupLeavesTheProcWalk) {
  std::string cgroup = dir_.Join("not-a-cgroup/attempt");  // its parent does not exist
  std::vector<std::string> argv =
      ShimArgv(StageLeavingDetachedProcesses(dir_.Join("work"), "exit 0"));
  argv.insert(argv.begin() + 1, {"--cgroup", cgroup});
  ShimProcess shim(argv, Env());
  ASSERT_TRUE(shim.Wait(20'000).has_value());
  ExpectBothGone();
  EXPECT_EQ(ReadJson("exit.json")["leftovers_killed"], 2);
  EXPECT_FALSE(ReadJson("pid.json").contains("cgroup"));
  EXPECT_NE(ReadTextFile(dir_.Join("stderr.log")).find("cannot use cgroup " + cgroup),
            std::string::npos)
      << ReadTextFile(dir_.Join("stderr.log"));
}

// The same with the attempt in a cgroup (v2) of its own: the shim is given one below a test
// cgroup, and the stage runs in it.
class ShimCgroupTest : public ShimLeftoversTest {
 protected:
  void SetUp() override {
    ShimLeftoversTest::SetUp();
    if (!cg_.ok()) GTEST_SKIP() << cg_.skip_reason();
    attempt_cg_ = cg_.dir() + "/attempt";
  }
  std::vector<std::string> CgroupArgv(const std::vector<std::string>& stage) {
    std::vector<std::string> argv = ShimArgv(stage);
    argv.insert(argv.begin() + 1, {"--cgroup", attempt_cg_});
    return argv;
  }
  testing::TestCgroup cg_;
  std::string attempt_cg_;
};

TEST_F(ShimCgroupTest, TheStageAndWhatItForksRunInTheCgroupAndEndWithIt) {
  std::string work = dir_.Join("work");
  ShimProcess shim(
      CgroupArgv(StageLeavingDetachedProcesses(
          work, "cat /proc/$(cat " + work + "/daemon.pid)/cgroup > " + work + "/cgroup.txt")),
      Env());
  auto st = shim.Wait(20'000);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(WEXITSTATUS(*st), 0);
  ExpectBothGone();
  // The double-forked daemon was in the attempt's cgroup.
  std::string seen = ReadTextFile(work + "/cgroup.txt");
  EXPECT_TRUE(EndsWith(StripWhitespace(seen), cg_.dir().substr(cg_.dir().rfind('/')) + "/attempt"))
      << seen;
  EXPECT_EQ(ReadJson("pid.json")["cgroup"], attempt_cg_);
  EXPECT_FALSE(PathExists(attempt_cg_));  // removed once empty
  json exit = ReadJson("exit.json");
  EXPECT_EQ(exit["exit_code"], 0);
  EXPECT_EQ(exit["leftovers_killed"], 2);
  ASSERT_TRUE(exit.contains("cpu_usec")) << exit.dump();
  EXPECT_GE(exit["cpu_usec"].get<int64_t>(), 0);
  // Memory only where the memory controller is enabled for the attempts' cgroups.
  EXPECT_EQ(exit.contains("memory_peak_bytes"), cg_.accounts_memory()) << exit.dump();
}

TEST_F(ShimCgroupTest, AProcessOutsideTheShimsTreeButInTheCgroupIsKilledToo) {
  // Handed to the attempt from outside (as a daemon that took work from the stage would be):
  // no /proc rule finds it, the cgroup does.
  std::string work = dir_.Join("work");
  ShimProcess shim(
      CgroupArgv({"/bin/sh", "-c", "while [ ! -e " + work + "/go ]; do sleep 0.01; done; exit 0"}),
      Env());
  ASSERT_TRUE(WaitFor([&] { return Has("pid.json"); }, 10'000));
  auto outsider = testing::Subprocess::Start({"/bin/sleep", "1000"});
  ASSERT_TRUE(outsider.ok());
  std::string pid = std::to_string((*outsider)->pid());
  WriteTextFile(attempt_cg_ + "/cgroup.procs", pid);
  ASSERT_TRUE(EndsWith(testing::CgroupOf((*outsider)->pid()), "/attempt"));
  WriteTextFile(work + "/go", "");
  ASSERT_TRUE(shim.Wait(20'000).has_value());
  EXPECT_FALSE((*outsider)->Running());
  EXPECT_EQ(ReadJson("exit.json")["leftovers_killed"], 1);
  EXPECT_FALSE(PathExists(attempt_cg_));
}

TEST_F(ShimCgroupTest, ACancelReachesTheCgroupAndLeavesNothing) {
  CancelAndExpectBothGone(CgroupArgv(StageLeavingDetachedProcesses(dir_.Join("work"), "sleep 60")));
  EXPECT_FALSE(PathExists(attempt_cg_));
}

TEST(LeftoversTest, TheAttemptIsTheStageGroupTheShimSessionItsChildrenAndTheirDescendants) {
  const pid_t shim = 100;
  std::vector<ProcEntry> all = {
      {1, 0, 1, 1, 'S'},            // init
      {50, 1, 50, 50, 'S'},         // unrelated
      {shim, 1, shim, shim, 'S'},   // the shim, leading its session
      {101, shim, 101, shim, 'S'},  // the stage
      {102, 101, 101, shim, 'S'},   // in the stage's group
      {200, shim, 200, 200, 'S'},   // setsid'ed, re-parented to the shim
      {201, 200, 201, 200, 'S'},    // its child, in a group of its own
      {300, shim, 300, 300, 'Z'},   // a zombie child: dead already
      {400, 1, 400, shim, 'S'},     // in the shim's session, re-parented elsewhere
      {500, 50, 500, 50, 'S'},      // unrelated, child of another
  };
  std::vector<pid_t> got = AttemptProcesses(all, shim, 101, shim);
  EXPECT_EQ(got, (std::vector<pid_t>{101, 102, 200, 201, 400}));
  // Without the session rule (the shim does not lead its session), 400 is not the attempt's.
  EXPECT_EQ(AttemptProcesses(all, shim, 101, 0), (std::vector<pid_t>{101, 102, 200, 201}));
}

TEST(LeftoversTest, ListsThisProcessWithItsParentGroupAndSession) {
  std::vector<ProcEntry> all = ListProcesses();
  auto self =
      std::find_if(all.begin(), all.end(), [](const ProcEntry& e) { return e.pid == ::getpid(); });
  ASSERT_NE(self, all.end());
  EXPECT_EQ(self->ppid, ::getppid());
  EXPECT_EQ(self->pgid, ::getpgid(0));
  EXPECT_EQ(self->sid, ::getsid(0));
  EXPECT_NE(self->state, 'Z');
}

TEST(LeftoversTest, NoteSaysHowMany) {
  EXPECT_EQ(LeftoversNote(0), "");
  EXPECT_EQ(LeftoversNote(1), "1 process outlived the stage and was killed");
  EXPECT_EQ(LeftoversNote(2), "2 processes outlived the stage and were killed");
}

TEST_F(ShimTest, StageGetsDefaultSignalHandlingWhateverTheShimInherited) {
  // The launching shell ignores SIGTERM; the stage must still die of it on cancel.
  std::string cmd = "trap '' TERM INT; exec " + BinPath("longhaul-shim") + " --dir " + dir_.path() +
                    " -- " + BinPath("lh-testjob") + " --sleep 60";
  ShimProcess launcher({"/bin/sh", "-c", cmd}, Env());
  ASSERT_TRUE(WaitFor([&] { return Has("pid.json"); }, 10'000));
  WriteTextFile(dir_.Join("cancel.json"), R"({"reason":"cancelled","grace_ms":60000})");
  ::kill(launcher.pid(), SIGTERM);
  ASSERT_TRUE(launcher.Wait(10'000).has_value());
  EXPECT_EQ(ReadJson("exit.json")["signal"], SIGTERM);
}

TEST_F(ShimTest, StageStartsWithNoSignalIgnoredOrBlocked) {
  // Started as the agent starts it (posix_spawn), from a caller that ignores SIGPIPE.
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  ShimProcess shim(ShimArgv({"/bin/sh", "-c", "exec grep -E '^Sig(Blk|Ign)' /proc/self/status"}),
                   Env());
  ::sigaction(SIGPIPE, &old, nullptr);
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  EXPECT_EQ(ReadTextFile(dir_.Join("stdout.log")),
            "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST_F(ShimTest, StageSurvivesSigkillOfItsLauncher) {
  // sh starts the shim in the background and waits; killing sh's whole process group (as a
  // crash of the agent's service would) must not reach the shim or the stage.
  std::string cmd = BinPath("longhaul-shim") + " --dir " + dir_.path() + " -- " +
                    BinPath("lh-testjob") + " --sleep 60 & wait";
  auto launcher = testing::Subprocess::Start({"/bin/sh", "-c", cmd},
                                             {{"LONGHAUL_OUTPUT_DIR", dir_.Join("out")}});
  ASSERT_TRUE(launcher.ok()) << launcher.status();
  ASSERT_TRUE(WaitFor([&] { return Has("pid.json"); }, 10'000));
  json pid = ReadJson("pid.json");
  (*launcher)->SignalGroup(SIGKILL);
  ASSERT_TRUE((*launcher)->Wait(10'000).has_value());
  EXPECT_TRUE(ProcessAlive(pid["shim_pid"].get<pid_t>()));
  EXPECT_TRUE(ProcessAlive(pid["stage_pid"].get<pid_t>()));
  EXPECT_FALSE(Has("exit.json"));
  // Clean up through the shim, as the agent would.
  WriteTextFile(dir_.Join("cancel.json"), R"({"reason":"cancelled","grace_ms":100})");
  ::kill(pid["shim_pid"].get<pid_t>(), SIGTERM);
  ASSERT_TRUE(WaitFor([&] { return Has("exit.json"); }, 10'000));
  EXPECT_EQ(ReadJson("exit.json")["reason"], "cancelled");
}

TEST_F(ShimTest, LocksItsDirectoryWhileItRunsAndCreatesNoLockFile) {
  auto locked_by_someone = [&] {
    int fd = ::open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY);
    bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
    ::close(fd);
    return held;
  };
  ShimProcess shim(ShimArgv({BinPath("lh-testjob"), "--sleep", "60"}), Env());
  ASSERT_TRUE(WaitFor([&] { return Has("pid.json"); }, 10'000));
  EXPECT_TRUE(locked_by_someone());
  ::kill(shim.pid(), SIGTERM);
  ASSERT_TRUE(shim.Wait(10'000).has_value());
  EXPECT_FALSE(locked_by_someone());
  EXPECT_FALSE(PathExists(dir_.Join("shim.lock")));
}

TEST_F(ShimTest, SecondShimForTheSameAttemptRefuses) {
  ShimProcess first(ShimArgv({BinPath("lh-testjob"), "--sleep", "60"}), Env());
  ASSERT_TRUE(WaitFor([&] { return Has("pid.json"); }, 10'000));
  ShimProcess second(ShimArgv({BinPath("lh-testjob"), "--print", "twice"}), Env());
  auto st = second.Wait(10'000);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(WEXITSTATUS(*st), kShimRefused);
  EXPECT_EQ(ReadTextFile(dir_.Join("stdout.log")), "");
  ::kill(first.pid(), SIGTERM);
  ASSERT_TRUE(first.Wait(10'000).has_value());
}

TEST_F(ShimTest, RefusesAnAttemptThatAlreadyEnded) {
  WriteTextFile(dir_.Join("exit.json"), R"({"exit_code":-1,"start_failed":true})");
  ShimProcess shim(ShimArgv({BinPath("lh-testjob"), "--print", "ran"}), Env());
  auto st = shim.Wait(10'000);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(WEXITSTATUS(*st), kShimRefused);
  EXPECT_EQ(ReadTextFile(dir_.Join("stdout.log")), "");
}

TEST(ShimArgsTest, RequiresDirAndProgram) {
  ShimOptions o;
  std::string err;
  EXPECT_FALSE(ParseShimArgs({"--", "x"}, &o, &err));
  EXPECT_NE(err.find("--dir"), std::string::npos);
  EXPECT_FALSE(ParseShimArgs({"--dir", "/d"}, &o, &err));
  EXPECT_FALSE(ParseShimArgs({"--dir", "/d", "--grace-ms", "x", "--", "p"}, &o, &err));
  EXPECT_NE(err.find("--grace-ms 'x'"), std::string::npos);
  ShimOptions ok;
  ASSERT_TRUE(ParseShimArgs({"--dir", "/d", "--grace-ms", "5", "--", "p", "--", "a"}, &ok, &err));
  EXPECT_EQ(ok.grace_ms, 5);
  EXPECT_EQ(ok.argv, (std::vector<std::string>{"p", "--", "a"}));
  EXPECT_EQ(ok.cgroup, "");
  ShimOptions in_cgroup;
  ASSERT_TRUE(
      ParseShimArgs({"--dir", "/d", "--cgroup", "/sys/fs/cgroup/x", "--", "p"}, &in_cgroup, &err));
  EXPECT_EQ(in_cgroup.cgroup, "/sys/fs/cgroup/x");
  EXPECT_FALSE(ParseShimArgs({"--dir", "/d", "--cgroup"}, &o, &err));
}

TEST(ShimFilesTest, JsonRoundTripsOfTheFewFieldsItReads) {
  std::string text =
      std::string("{\"reason\": ") + JsonQuote("a \"quoted\"\n\\ reason") + ", \"grace_ms\": 1500}";
  std::string reason;
  int64_t grace = 0;
  ASSERT_TRUE(JsonFindString(text, "reason", &reason));
  EXPECT_EQ(reason, "a \"quoted\"\n\\ reason");
  ASSERT_TRUE(JsonFindInt(text, "grace_ms", &grace));
  EXPECT_EQ(grace, 1500);
  EXPECT_FALSE(JsonFindInt(text, "missing", &grace));
  // Invalid UTF-8 never makes the file unreadable for the agent's JSON parser.
  EXPECT_NO_THROW(json::parse(JsonQuote("bad \xff byte")));
}

TEST(ShimFilesTest, PreparedFileAppearsWholeUnderItsNameOnlyWhenPublished) {
  testing::TempDir tmp;
  auto entries = [&] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp.path())) n += e.exists();
    return n;
  };
  PreparedFile f(tmp.path(), 0);
  EXPECT_EQ(entries(), 0);  // unnamed until published: nothing to clean up if we die
  ASSERT_TRUE(f.Publish(tmp.Join("exit.json"), "{\"exit_code\":0}\n"));
  EXPECT_EQ(ReadTextFile(tmp.Join("exit.json")), "{\"exit_code\":0}\n");
  EXPECT_EQ(entries(), 1);
  // Never over an existing file: the caller falls back to writing it the ordinary way.
  PreparedFile g(tmp.path(), 0);
  EXPECT_FALSE(g.Publish(tmp.Join("exit.json"), "other\n"));
  EXPECT_EQ(ReadTextFile(tmp.Join("exit.json")), "{\"exit_code\":0}\n");
  EXPECT_EQ(entries(), 1);
  PreparedFile h(tmp.Join("no-such-dir"), 0);  // cannot be prepared: Publish says so
  EXPECT_FALSE(h.Publish(tmp.Join("no-such-dir/exit.json"), "x\n"));
}

TEST(ShimFilesTest, ProcStartTimeTellsProcessesApart) {
  EXPECT_GT(ProcStartTime(::getpid()), 0);
  EXPECT_EQ(ProcStartTime(-5), -1);
}

}  // namespace
}  // namespace longhaul::shim
