// lh-finetune / lh-extract --backend command, run as real processes supervising small shell
// scripts written here: progress, loss and checkpoints reported; the resume flag with the
// newest checkpoint on a retry; SIGTERM forwarded to the command's group, SIGKILL after the
// grace; a missing expected output fails naming the path; the command's exit code passes
// through.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include "core/event.h"
#include "core/fs.h"
#include "core/strings.h"
#include "tests/stages/common/stage_events.h"
#include "tests/testing/test_util.h"

namespace longhaul {
namespace {

using testing::BinPath;
using testing::ReadEvents;
using testing::ReadTextFile;
using testing::RunCommand;
using testing::Subprocess;
using testing::TempDir;
using testing::WaitFor;

class CommandBackendTest : public ::testing::Test {
 protected:
  std::string Script(const std::string& name, const std::string& body) {
    std::string path = dir_.Join(name);
    testing::WriteTextFile(path, "#!/bin/sh\n" + body);
    ::chmod(path.c_str(), 0755);
    return path;
  }
  // A training script: epochs START..3 (START is 1, or the one after --resume DIR's epoch),
  // each printing tqdm-like progress with carriage returns and a loss line, then writing
  // OUT/epoch_N/ (weights, then state); at the end OUT/drafter/config.json. Its argv goes to
  // OUT/argv.<attempt>.
  std::string TrainScript() {
    return Script("train.sh", R"(out="$1"; shift
echo "$@" > "$out/argv.$LONGHAUL_ATTEMPT"
start=1
if [ "$1" = "--resume" ]; then
  last=$(basename "$2"); start=$(( ${last#epoch_} + 1 ))
  echo "resuming after $last"
fi
e=$start
while [ $e -le 3 ]; do
  echo "Epoch $e/3"
  s=1
  while [ $s -le 4 ]; do
    step=$(( (e - 1) * 4 + s ))
    printf '\r train: %d/12 [00:01<00:02]' $step >&2
    s=$(( s + 1 ))
  done
  printf '\n' >&2
  echo "epoch $e loss=0.$(( 9 - e ))5"
  mkdir -p "$out/epoch_$e"; echo w > "$out/epoch_$e/weights"; echo s > "$out/epoch_$e/state"
  e=$(( e + 1 ))
done
mkdir -p "$out/drafter"; echo '{}' > "$out/drafter/config.json"
)");
  }
  std::vector<std::string> FinetuneArgv(const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> argv = {BinPath("lh-finetune"),
                                     "--backend",
                                     "command",
                                     "--out",
                                     out,
                                     "--progress-pattern",
                                     R"((\d+)/(\d+) \[)",
                                     "--loss-pattern",
                                     R"(loss[=: ]+([0-9.eE+-]+))",
                                     "--epoch-pattern",
                                     R"(^Epoch (\d+)/(\d+))",
                                     "--checkpoint-glob",
                                     "epoch_*",
                                     "--output",
                                     "drafter=drafter"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  TempDir dir_;
};

TEST_F(CommandBackendTest, ReportsProgressLossCheckpointsAndOutputs) {
  std::string out = dir_.Join("run");
  ASSERT_TRUE(MakeDirs(out).ok());
  auto argv = FinetuneArgv(out, {"--", TrainScript(), out});
  auto r = RunCommand(argv, {{"LONGHAUL_EVENTS", dir_.Join("ev")}, {"LONGHAUL_ATTEMPT", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("epoch 3 loss=0.65"), std::string::npos) << r.out;  // echoed
  EXPECT_NE(r.err.find("\r train: 12/12"), std::string::npos);             // unchanged

  std::vector<double> losses, progress;
  std::vector<int64_t> ckpt_steps;
  std::string drafter_output;
  for (const StageEvent& e : ReadEvents(dir_.Join("ev"))) {
    if (e.type == EventType::kMetric && e.name == "loss") losses.push_back(e.value);
    if (e.type == EventType::kProgress && e.unit == "steps") progress.push_back(e.done);
    if (e.type == EventType::kCheckpoint) {
      ckpt_steps.push_back(*e.step);
      EXPECT_TRUE(StartsWith(e.path, out + "/epoch_")) << e.path;
    }
    if (e.type == EventType::kOutput && e.name == "drafter") drafter_output = e.text;
  }
  // Three loss lines far apart in the output; rate limiting may merge some, never lose the last.
  ASSERT_FALSE(losses.empty());
  EXPECT_DOUBLE_EQ(losses.back(), 0.65);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back(), 12);
  EXPECT_EQ(ckpt_steps, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(drafter_output, out + "/drafter");
}

TEST_F(CommandBackendTest, RetryAppendsTheResumeFlagWithTheNewestCheckpoint) {
  std::string out = dir_.Join("run");
  ASSERT_TRUE(MakeDirs(out + "/epoch_1").ok());
  ASSERT_TRUE(MakeDirs(out + "/epoch_2").ok());
  testing::WriteTextFile(out + "/epoch_1/weights", "w");
  testing::WriteTextFile(out + "/epoch_2/weights", "w");
  auto argv = FinetuneArgv(
      out, {"--resume-flag", "--resume", "--resume-with-checkpoint", "--", TrainScript(), out});
  auto r = RunCommand(
      argv,
      {{"LONGHAUL_EVENTS", dir_.Join("ev")}, {"LONGHAUL_RESUME", "1"}, {"LONGHAUL_ATTEMPT", "2"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ReadTextFile(out + "/argv.2"), StrCat("--resume ", out, "/epoch_2\n"));
  EXPECT_NE(r.out.find("resuming after epoch_2"), std::string::npos) << r.out;
  std::vector<int64_t> ckpt_steps;
  for (const StageEvent& e : ReadEvents(dir_.Join("ev"))) {
    if (e.type == EventType::kCheckpoint) ckpt_steps.push_back(*e.step);
  }
  EXPECT_EQ(ckpt_steps, (std::vector<int64_t>{3}));  // the earlier ones are not re-reported

  // A first attempt (no LONGHAUL_RESUME) gets no flag; a resume with no checkpoint yet starts
  // from the beginning and says so.
  std::string fresh = dir_.Join("fresh");
  ASSERT_TRUE(MakeDirs(fresh).ok());
  auto f = RunCommand(FinetuneArgv(fresh, {"--resume-flag", "--resume", "--resume-with-checkpoint",
                                           "--", TrainScript(), fresh}),
                      {{"LONGHAUL_RESUME", "1"}, {"LONGHAUL_ATTEMPT", "1"}});
  ASSERT_EQ(f.exit_code, 0) << f.out << f.err;
  EXPECT_EQ(ReadTextFile(fresh + "/argv.1"), "\n");
  EXPECT_NE(f.out.find("starting from the beginning"), std::string::npos) << f.out;

  // {checkpoint} inside the flag.
  auto inl = RunCommand(
      FinetuneArgv(out, {"--resume-flag", "--from={checkpoint}", "--", TrainScript(), out}),
      {{"LONGHAUL_RESUME", "1"}, {"LONGHAUL_ATTEMPT", "3"}});
  ASSERT_EQ(inl.exit_code, 0) << inl.err;
  EXPECT_EQ(ReadTextFile(out + "/argv.3"), StrCat("--from=", out, "/epoch_3\n"));
}

TEST_F(CommandBackendTest, SigtermIsForwardedToTheCommandsGroup) {
  // The script traps TERM (records it, exits 143); its child sleeper is in the same group.
  std::string script = Script("term.sh", R"(
sleep 600 &
echo $! > child.pid
trap 'echo TERM > term.txt; exit 143' TERM
echo $$ > main.pid
while :; do sleep 0.05; done
)");
  auto p = Subprocess::Start(
      {BinPath("lh-extract"), "--backend", "command", "--out", dir_.path(), "--grace", "20s", "--",
       "/bin/sh", "-c", StrCat("cd ", dir_.path(), " && exec ", script)},
      {{"LONGHAUL_EVENTS", dir_.Join("ev")}}, dir_.Join("log"));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitFor([&] { return !ReadTextFile(dir_.Join("main.pid")).empty(); }, 10000));
  pid_t child = std::atoi(ReadTextFile(dir_.Join("child.pid")).c_str());
  ASSERT_GT(child, 0);
  (*p)->Signal(SIGTERM);  // the supervisor only; it must pass it on
  auto st = (*p)->Wait(15000);
  ASSERT_TRUE(st.has_value()) << ReadTextFile(dir_.Join("log"));
  ASSERT_TRUE(WIFEXITED(*st));
  EXPECT_EQ(WEXITSTATUS(*st), 143);
  EXPECT_EQ(ReadTextFile(dir_.Join("term.txt")), "TERM\n");
  // The sleeper got SIGTERM too (it is in the group), or was killed with the group's remnants.
  EXPECT_TRUE(WaitFor([&] { return !testing::ProcessAlive(child); }, 5000));
  EXPECT_NE(ReadTextFile(dir_.Join("log")).find("sending it to the command's process group"),
            std::string::npos);
}

TEST_F(CommandBackendTest, Sigusr1IsPassedToTheCommandWhichCheckpointsAndGoesOn) {
  // longhaul's notice before a stop (preempt_notice): the trainer writes a checkpoint on
  // SIGUSR1 and keeps training; the supervisor passes it on and reports the checkpoint.
  std::string out = dir_.Join("run");
  ASSERT_TRUE(MakeDirs(out).ok());
  std::string script = Script("usr1.sh", R"(out="$1"
trap 'mkdir -p "$out/epoch_1" && echo w > "$out/epoch_1/weights" && echo USR1 >> "$out/usr1.txt"' USR1
trap 'echo TERM > "$out/term.txt"; exit 143' TERM
echo $$ > "$out/main.pid"
while :; do sleep 0.05; done
)");
  auto p = Subprocess::Start(FinetuneArgv(out, {"--grace", "20s", "--", script, out}),
                             {{"LONGHAUL_EVENTS", dir_.Join("ev")}}, dir_.Join("log"));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitFor([&] { return !ReadTextFile(out + "/main.pid").empty(); }, 10000));
  (*p)->Signal(SIGUSR1);  // the supervisor only; it must pass it on and live on
  auto reported = [&] {
    for (const StageEvent& e : ReadEvents(dir_.Join("ev"))) {
      if (e.type == EventType::kCheckpoint && e.path == out + "/epoch_1") return true;
    }
    return false;
  };
  ASSERT_TRUE(WaitFor(reported, 10000)) << ReadTextFile(dir_.Join("log"));
  EXPECT_EQ(ReadTextFile(out + "/usr1.txt"), "USR1\n");
  EXPECT_FALSE(PathExists(out + "/term.txt")) << "a notice stops nothing";
  // Still supervising: a stop afterwards goes through as always.
  (*p)->Signal(SIGTERM);
  auto st = (*p)->Wait(15000);
  ASSERT_TRUE(st.has_value()) << ReadTextFile(dir_.Join("log"));
  ASSERT_TRUE(WIFEXITED(*st));
  EXPECT_EQ(WEXITSTATUS(*st), 143);
  EXPECT_EQ(ReadTextFile(out + "/term.txt"), "TERM\n");
  EXPECT_NE(ReadTextFile(dir_.Join("log")).find("got SIGUSR1 (a notice before a stop)"),
            std::string::npos);
}

TEST_F(CommandBackendTest, ACommandIgnoringSigtermIsKilledAfterTheGrace) {
  std::string script = Script("stubborn.sh", R"(
trap '' TERM
echo $$ > main.pid
while :; do sleep 0.05; done
)");
  auto p =
      Subprocess::Start({BinPath("lh-finetune"), "--backend", "command", "--grace", "300ms", "--",
                         "/bin/sh", "-c", StrCat("cd ", dir_.path(), " && exec ", script)},
                        {}, dir_.Join("log"));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitFor([&] { return !ReadTextFile(dir_.Join("main.pid")).empty(); }, 10000));
  pid_t main = std::atoi(ReadTextFile(dir_.Join("main.pid")).c_str());
  (*p)->Signal(SIGTERM);
  auto st = (*p)->Wait(15000);
  ASSERT_TRUE(st.has_value());
  ASSERT_TRUE(WIFEXITED(*st));
  EXPECT_EQ(WEXITSTATUS(*st), 128 + SIGKILL);
  EXPECT_FALSE(testing::ProcessAlive(main));
  EXPECT_NE(ReadTextFile(dir_.Join("log")).find("SIGKILL"), std::string::npos);
}

TEST_F(CommandBackendTest, MissingExpectedOutputFailsNamingThePath) {
  auto r = RunCommand({BinPath("lh-finetune"), "--backend", "command", "--out", dir_.path(),
                       "--expect-file", "model/config.json", "--expect-file", "present.txt", "--",
                       "/bin/sh", "-c", StrCat("echo hi > ", dir_.Join("present.txt"))},
                      {{"LONGHAUL_EVENTS", dir_.Join("ev")}});
  EXPECT_EQ(r.exit_code, 3);
  std::string path = dir_.Join("model/config.json");
  EXPECT_NE(r.out.find("expected output missing: " + path), std::string::npos) << r.out;
  size_t at = r.out.find("the command exited 0 but");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string failure = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_EQ(failure.find("present.txt"), std::string::npos) << failure;
  bool message = false;
  for (const StageEvent& e : ReadEvents(dir_.Join("ev"))) {
    message |= e.type == EventType::kMessage && e.level == "error" &&
               e.text.find(path) != std::string::npos;
  }
  EXPECT_TRUE(message);

  // An empty file is as bad as a missing one.
  testing::WriteTextFile(dir_.Join("empty.bin"), "");
  auto empty = RunCommand({BinPath("lh-finetune"), "--backend", "command", "--out", dir_.path(),
                           "--expect-file", "empty.bin", "--", "true"});
  EXPECT_EQ(empty.exit_code, 3);
  EXPECT_NE(empty.out.find("expected output is empty: " + dir_.Join("empty.bin")),
            std::string::npos)
      << empty.out;
}

TEST_F(CommandBackendTest, ExitCodeAndLastErrorLinePassThrough) {
  auto r = RunCommand({BinPath("lh-extract"), "--backend", "command", "--", "/bin/sh", "-c",
                       "echo 'RuntimeError: CUDA out of memory' >&2; exit 7"},
                      {{"LONGHAUL_EVENTS", dir_.Join("ev")}});
  EXPECT_EQ(r.exit_code, 7);
  bool message = false;
  for (const StageEvent& e : ReadEvents(dir_.Join("ev"))) {
    message |= e.type == EventType::kMessage && e.level == "error" &&
               e.text.find("exited with code 7") != std::string::npos &&
               e.text.find("CUDA out of memory") != std::string::npos;
  }
  EXPECT_TRUE(message);
  auto missing =
      RunCommand({BinPath("lh-extract"), "--backend", "command", "--", "no-such-program-here"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.out.find("not found on PATH: no-such-program-here"), std::string::npos)
      << missing.out;
}

// SpecForge's trainer takes a config file: the stage writes it from the workflow's pairs into
// its output dir and hands the command its path; a resume flag still follows it.
TEST_F(CommandBackendTest, WritesTheConfigFileAndPassesItsPath) {
  std::string out = dir_.Join("run");
  ASSERT_TRUE(MakeDirs(out).ok());
  std::string script = Script("cfg.sh", R"(printf '%s\n' "$@" > "$OUT/argv.txt")");
  auto r = RunCommand({BinPath("lh-finetune"),
                       "--backend",
                       "command",
                       "--out",
                       out,
                       "--config-file",
                       "cfg/specforge.yaml",
                       "--config-set",
                       "model.target_model_path=/models/t",
                       "--config-set",
                       "training.num_epochs=5",
                       "--config-set",
                       "data.hidden_states_path=/hs",
                       "--resume-flag",
                       "training.resume_from=/ckpt",
                       "--",
                       script,
                       "train",
                       "--config",
                       "{config}"},
                      {{"OUT", out}, {"LONGHAUL_RESUME", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string path = out + "/cfg/specforge.yaml";
  EXPECT_EQ(ReadTextFile(out + "/argv.txt"),
            StrCat("train\n--config\n", path, "\ntraining.resume_from=/ckpt\n"));
  YAML::Node doc = YAML::LoadFile(path);
  EXPECT_EQ(doc["model"]["target_model_path"].as<std::string>(), "/models/t");
  EXPECT_EQ(doc["training"]["num_epochs"].as<int>(), 5);
  EXPECT_EQ(doc["data"]["hidden_states_path"].as<std::string>(), "/hs");
  EXPECT_NE(r.out.find("wrote " + path), std::string::npos) << r.out;

  // {config} or --config-set without --config-file, and a bad pair, are usage errors.
  auto nofile = RunCommand(
      {BinPath("lh-finetune"), "--backend", "command", "--", "echo", "--config", "{config}"});
  EXPECT_EQ(nofile.exit_code, 2);
  EXPECT_NE(nofile.err.find("need --config-file"), std::string::npos) << nofile.err;
  auto bad = RunCommand({BinPath("lh-finetune"), "--backend", "command", "--config-file", "c.yaml",
                         "--config-set", "training.num_epochs", "--", "true"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--config-set 'training.num_epochs': expected KEY=VALUE"),
            std::string::npos)
      << bad.err;
}

TEST_F(CommandBackendTest, UsageErrorsNameTheFlag) {
  auto mixed =
      RunCommand({BinPath("lh-finetune"), "--backend", "command", "--epochs", "3", "--", "true"});
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("--epochs"), std::string::npos) << mixed.err;
  auto nocmd = RunCommand({BinPath("lh-finetune"), "--backend", "command"});
  EXPECT_EQ(nocmd.exit_code, 2);
  EXPECT_NE(nocmd.err.find("-- CMD ARGS"), std::string::npos) << nocmd.err;
  auto regex = RunCommand(
      {BinPath("lh-extract"), "--backend", "command", "--loss-pattern", "loss=(", "--", "true"});
  EXPECT_EQ(regex.exit_code, 2);
  EXPECT_NE(regex.err.find("--loss-pattern"), std::string::npos) << regex.err;
  auto other = RunCommand({BinPath("lh-extract"), "--backend", "refengine", "--data", "x", "--out",
                           "y", "--loss-pattern", "l=(.*)"});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("--loss-pattern"), std::string::npos) << other.err;
}

}  // namespace
}  // namespace longhaul
