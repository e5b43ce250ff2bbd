// What the agent records of an attempt's environment: the executable resolved on the stage's
// PATH, its hash (cached by path, mtime and size), and the engine version of an lh-serve stage
// (asked once, kept for the agent's next start).
#include "agent/lib/attempt_environment.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "core/hash.h"
#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

class AttemptEnvironmentTest : public ::testing::Test {
 protected:
  std::string MakeExecutable(const std::string& name, const std::string& text) {
    std::string path = dir_.Join(name);
    testing::WriteTextFile(path, text);
    EXPECT_EQ(::chmod(path.c_str(), 0755), 0);
    return path;
  }
  // A probe whose engine answers come from `version_`, counting the questions.
  EnvironmentProbe FakeEngineProbe() {
    EnvironmentProbe p("0.1.0");
    p.set_command_runner([this](const std::vector<std::string>& argv, const std::string& path,
                                const std::string& profiles_env) -> Result<std::string> {
      asked_.push_back(argv);
      last_path_ = path;
      last_profiles_env_ = profiles_env;
      if (version_.empty()) return absl::FailedPreconditionError("no version_command");
      return version_ + "\nmore lines\n";
    });
    return p;
  }
  testing::TempDir dir_;
  std::string version_ = "0.8.4";
  std::vector<std::vector<std::string>> asked_;
  std::string last_path_, last_profiles_env_;
};

TEST_F(AttemptEnvironmentTest, ResolvesTheProgramOnTheStagesPath) {
  std::string exe = MakeExecutable("tool", "#!/bin/sh\n");
  testing::WriteTextFile(dir_.Join("notexec"), "x");
  EXPECT_EQ(EnvironmentProbe::ResolveExecutable("tool", "/nonexistent:" + dir_.path()), exe);
  EXPECT_EQ(EnvironmentProbe::ResolveExecutable("notexec", dir_.path()), "");
  EXPECT_EQ(EnvironmentProbe::ResolveExecutable(exe, ""), exe);
  EXPECT_EQ(EnvironmentProbe::ResolveExecutable("missing", dir_.path()), "");
}

TEST_F(AttemptEnvironmentTest, TheHashIsCachedUntilTheFileChanges) {
  std::string exe = MakeExecutable("tool", "#!/bin/sh\necho one\n");
  EnvironmentProbe p("0.1.0");
  v1::AttemptEnvironment e = p.Probe({"tool", "--x"}, dir_.path(), "");
  EXPECT_EQ(e.executable(), "tool");
  EXPECT_EQ(e.executable_path(), exe);
  EXPECT_EQ(e.executable_sha256(), Sha256Hex("#!/bin/sh\necho one\n"));
  EXPECT_EQ(e.agent_version(), "0.1.0");
  EXPECT_EQ(e.engine_profile(), "");
  EXPECT_EQ(p.files_hashed(), 1);
  for (int i = 0; i < 5; ++i) p.Probe({"tool"}, dir_.path(), "");
  EXPECT_EQ(p.files_hashed(), 1) << "same path, mtime and size: not read again";
  // Rebuilt (another size and mtime): hashed again.
  testing::WriteTextFile(exe, "#!/bin/sh\necho two, longer\n");
  struct timeval later[2] = {{2'000'000'000, 0}, {2'000'000'000, 0}};
  ASSERT_EQ(::utimes(exe.c_str(), later), 0);
  v1::AttemptEnvironment e2 = p.Probe({"tool"}, dir_.path(), "");
  EXPECT_EQ(p.files_hashed(), 2);
  EXPECT_EQ(e2.executable_sha256(), Sha256Hex("#!/bin/sh\necho two, longer\n"));
}

TEST_F(AttemptEnvironmentTest, AMissingProgramIsANoteNotAnError) {
  EnvironmentProbe p("0.1.0");
  v1::AttemptEnvironment e = p.Probe({"nope"}, dir_.path(), "");
  EXPECT_EQ(e.executable_path(), "");
  EXPECT_EQ(e.executable_sha256(), "");
  ASSERT_EQ(e.notes_size(), 1);
  EXPECT_NE(e.notes(0).find("nope was not found"), std::string::npos) << e.notes(0);
}

TEST_F(AttemptEnvironmentTest, TheEngineVersionIsAskedOncePerProfile) {
  std::string serve = MakeExecutable("lh-serve", "#!/bin/sh\n");
  EnvironmentProbe p = FakeEngineProbe();
  std::vector<std::string> argv = {"lh-serve", "--profile", "ref", "--profiles-dir",
                                   "/p",       "--model",   "m"};
  v1::AttemptEnvironment e = p.Probe(argv, dir_.path(), "/envdir");
  EXPECT_EQ(e.engine_profile(), "ref");
  EXPECT_EQ(e.engine_version(), "0.8.4");
  ASSERT_EQ(asked_.size(), 1u);
  EXPECT_EQ(asked_[0], (std::vector<std::string>{serve, "--profile", "ref", "--profiles-dir", "/p",
                                                 "--engine-version"}));
  EXPECT_EQ(last_path_, dir_.path());
  EXPECT_EQ(last_profiles_env_, "/envdir");
  version_ = "0.9.0";  // upgraded in place: this agent keeps what it asked
  EXPECT_EQ(p.Probe(argv, dir_.path(), "/envdir").engine_version(), "0.8.4");
  EXPECT_EQ(asked_.size(), 1u);
  // Another profile is asked on its own.
  EXPECT_EQ(p.Probe({"lh-serve", "--profile=other"}, dir_.path(), "").engine_version(), "0.9.0");
  EXPECT_EQ(asked_.size(), 2u);
  // A stage that is not lh-serve has no engine.
  EXPECT_EQ(p.Probe({"lh-serve-not", "--profile", "x"}, dir_.path(), "").engine_profile(), "");
}

TEST_F(AttemptEnvironmentTest, AFailedQuestionIsANoteAndAskedAgain) {
  MakeExecutable("lh-serve", "#!/bin/sh\n");
  version_ = "";
  EnvironmentProbe p = FakeEngineProbe();
  v1::AttemptEnvironment e = p.Probe({"lh-serve", "--profile", "ref"}, dir_.path(), "");
  EXPECT_EQ(e.engine_version(), "");
  ASSERT_EQ(e.notes_size(), 1);
  EXPECT_NE(e.notes(0).find("engine version: no version_command"), std::string::npos);
  version_ = "1.0";
  EXPECT_EQ(p.Probe({"lh-serve", "--profile", "ref"}, dir_.path(), "").engine_version(), "1.0");
  EXPECT_EQ(asked_.size(), 2u);
}

TEST_F(AttemptEnvironmentTest, ARestartedAgentAsksTheEnginesItKnowsAtStart) {
  MakeExecutable("lh-serve", "#!/bin/sh\n");
  std::string known = dir_.Join("engine_versions.json");
  {
    EnvironmentProbe p = FakeEngineProbe();
    p.set_known_file(known);
    ASSERT_TRUE(p.AskKnownEngines().ok());  // no file yet: nothing
    EXPECT_TRUE(p.KnownVersions().empty());
    p.Probe({"lh-serve", "--profile", "ref"}, dir_.path(), "");
  }
  version_ = "0.9.0";
  asked_.clear();
  EnvironmentProbe restarted = FakeEngineProbe();
  restarted.set_clock([] { return int64_t{1234}; });
  restarted.set_known_file(known);
  ASSERT_TRUE(restarted.AskKnownEngines().ok());
  ASSERT_EQ(asked_.size(), 1u);
  std::vector<v1::EngineVersionReport> reports = restarted.KnownVersions();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].profile(), "ref");
  EXPECT_EQ(reports[0].version(), "0.9.0");
  EXPECT_EQ(reports[0].checked_at_ms(), 1234);
  // And the first attempt after the start uses what it asked.
  EXPECT_EQ(restarted.Probe({"lh-serve", "--profile", "ref"}, dir_.path(), "").engine_version(),
            "0.9.0");
  EXPECT_EQ(asked_.size(), 1u);
  // A damaged file is an error to log, not a crash.
  testing::WriteTextFile(known, "{not json");
  EnvironmentProbe damaged = FakeEngineProbe();
  damaged.set_known_file(known);
  EXPECT_FALSE(damaged.AskKnownEngines().ok());
}

}  // namespace
}  // namespace longhaul::agent
