#include "agent/lib/attempt_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "agent/lib/agent_setup.h"
#include "agent/lib/log_reader.h"
#include "core/fs.h"
#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

class AttemptDirTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(MakeDirs(dir_.path()).ok()); }
  testing::TempDir tmp_;
  AttemptDir dir_{tmp_.path(), 42};
};

TEST_F(AttemptDirTest, PathsFollowTheStateDirLayout) {
  EXPECT_EQ(dir_.path(), tmp_.path() + "/attempts/42");
  EXPECT_EQ(dir_.events_path(), tmp_.path() + "/attempts/42/events.jsonl");
  EXPECT_EQ(dir_.log_path("stderr"), tmp_.path() + "/attempts/42/stderr.log");
}

TEST_F(AttemptDirTest, SpecRoundTrips) {
  v1::StartAttempt spec;
  spec.set_attempt_id(42);
  spec.add_argv("lh-testjob");
  spec.add_argv("--sleep");
  (*spec.mutable_env())["K"] = "V \"quoted\"";
  spec.add_gpus(3);
  ASSERT_TRUE(dir_.WriteSpec(spec).ok());
  auto back = dir_.ReadSpec();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->SerializeAsString(), spec.SerializeAsString());
}

TEST_F(AttemptDirTest, ExitRoundTripsAndReadsWhatTheShimWrites) {
  ExitInfo e{-1, 0, 1234, "exit status unknown: \"x\"", true, "", ""};
  ASSERT_TRUE(dir_.WriteExit(e).ok());
  auto back = dir_.ReadExit();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->exit_code, -1);
  EXPECT_EQ(back->reason, e.reason);
  EXPECT_TRUE(back->start_failed);
  EXPECT_EQ(back->node, "");
  ExitInfo failed{-1, 9, 1234, "node failure", false, "node_fail", "gpu-a1"};
  ASSERT_TRUE(dir_.WriteExit(failed).ok());
  back = dir_.ReadExit();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->failure_kind, "node_fail");
  EXPECT_EQ(back->node, "gpu-a1");  // an agent restarted before it reported keeps the node
  testing::WriteTextFile(
      dir_.File("exit.json"),
      R"({"exit_code":137,"signal":9,"ended_at_ms":5,"reason":"timeout","start_failed":false})");
  back = dir_.ReadExit();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->signal, 9);
  EXPECT_EQ(back->reason, "timeout");
}

TEST_F(AttemptDirTest, PidFileAndAckHintRoundTrip) {
  testing::WriteTextFile(
      dir_.File("pid.json"),
      R"({"shim_pid":10,"shim_start":100,"stage_pid":11,"stage_start":101,"started_at_ms":7})");
  auto pid = dir_.ReadPid();
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(pid->stage_pid, 11);
  EXPECT_EQ(pid->stage_start, 101);
  EXPECT_EQ(pid->cgroup, "");  // no cgroup: the field is left out
  testing::WriteTextFile(dir_.File("pid.json"),
                         R"({"shim_pid":10,"shim_start":100,"stage_pid":11,"stage_start":101,)"
                         R"("started_at_ms":7,"cgroup":"/sys/fs/cgroup/a/attempt-3-0badf00d"})");
  auto in_cgroup = dir_.ReadPid();
  ASSERT_TRUE(in_cgroup.ok()) << in_cgroup.status();
  EXPECT_EQ(in_cgroup->cgroup, "/sys/fs/cgroup/a/attempt-3-0badf00d");
  ASSERT_TRUE(dir_.WriteAckHint({17, 2048}).ok());
  auto hint = dir_.ReadAckHint();
  ASSERT_TRUE(hint.ok());
  EXPECT_EQ(hint->seq, 17);
  EXPECT_EQ(hint->offset, 2048);
}

TEST_F(AttemptDirTest, BadFilesAreNamedAndMissingOnesAreNotFound) {
  EXPECT_TRUE(absl::IsNotFound(dir_.ReadExit().status()));
  testing::WriteTextFile(dir_.File("pid.json"), R"({"shim_pid":10})");
  auto pid = dir_.ReadPid();
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(pid.status().message().find("pid.json: missing 'shim_start'"), absl::string_view::npos)
      << pid.status();
  testing::WriteTextFile(dir_.File("exit.json"), "{torn");
  EXPECT_TRUE(absl::IsInvalidArgument(dir_.ReadExit().status()));
}

TEST_F(AttemptDirTest, EmptyOrUnreadableExitFileSaysSo) {
  // What a shim that found the disk full may leave: the reason the coordinator records.
  testing::WriteTextFile(dir_.File("exit.json"), "");
  auto empty = dir_.ReadExit();
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), "exit.json empty (disk full?)");
  ::unlink(dir_.File("exit.json").c_str());
  ASSERT_EQ(::mkdir(dir_.File("exit.json").c_str(), 0755), 0);  // read() fails: EISDIR
  auto unreadable = dir_.ReadExit();
  ASSERT_FALSE(unreadable.ok());
  EXPECT_TRUE(absl::StartsWith(unreadable.status().message(), "exit.json unreadable: "))
      << unreadable.status();
  EXPECT_FALSE(absl::IsNotFound(unreadable.status()));
}

TEST_F(AttemptDirTest, DoneMarksTheEnd) {
  EXPECT_FALSE(dir_.IsDone());
  ASSERT_TRUE(dir_.MarkDone().ok());  // no exit.json: an empty file
  EXPECT_TRUE(dir_.IsDone());
  EXPECT_EQ(testing::ReadTextFile(dir_.File("done")), "");
  ASSERT_TRUE(dir_.MarkDone().ok());  // again: still done
  EXPECT_TRUE(dir_.IsDone());
}

TEST_F(AttemptDirTest, DoneIsASecondNameOfExitJsonWhenThereIsOne) {
  ASSERT_TRUE(dir_.WriteExit(ExitInfo{3, 0, 5, "", false, "", ""}).ok());
  ASSERT_TRUE(dir_.MarkDone().ok());
  EXPECT_TRUE(dir_.IsDone());
  struct stat exit_st {
  }, done_st{};
  ASSERT_EQ(::stat(dir_.File("exit.json").c_str(), &exit_st), 0);
  ASSERT_EQ(::stat(dir_.File("done").c_str(), &done_st), 0);
  EXPECT_EQ(exit_st.st_ino, done_st.st_ino);  // a link: no inode of its own
  EXPECT_EQ(dir_.ReadExit()->exit_code, 3);   // exit.json still reads as before
}

TEST(ProcessTest, MatchesOnlyTheSameProcess) {
  auto start = ProcessStartTime(::getpid());
  ASSERT_TRUE(start.ok());
  EXPECT_TRUE(ProcessMatches(::getpid(), *start));
  EXPECT_FALSE(ProcessMatches(::getpid(), *start + 1));  // a re-used pid
  EXPECT_FALSE(ProcessMatches(0, 0));
}

TEST(LogReaderTest, ReadsFromOffsetsAndFromTheEnd) {
  testing::TempDir tmp;
  std::string path = tmp.Join("stdout.log");
  testing::WriteTextFile(path, "0123456789");
  auto s = ReadLogSlice(path, 2, 3);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->data, "234");
  EXPECT_EQ(s->offset, 2);
  EXPECT_EQ(s->size, 10);
  EXPECT_EQ(ReadLogSlice(path, -4, 100)->data, "6789");
  EXPECT_EQ(ReadLogSlice(path, -40, 3)->data, "012");
  EXPECT_EQ(ReadLogSlice(path, 50, 3)->data, "");
  EXPECT_TRUE(absl::IsNotFound(ReadLogSlice(tmp.Join("none"), 0, 3).status()));
}

TEST(LogReaderTest, ReadsNeitherASymlinkNorAFifoPlantedAsTheLog) {
  testing::TempDir tmp;
  testing::WriteTextFile(tmp.Join("secret"), "secret");
  ASSERT_EQ(::symlink(tmp.Join("secret").c_str(), tmp.Join("stdout.log").c_str()), 0);
  auto link = ReadLogSlice(tmp.Join("stdout.log"), 0, 100);
  EXPECT_TRUE(absl::IsPermissionDenied(link.status())) << link.status();
  ASSERT_EQ(::mkfifo(tmp.Join("stderr.log").c_str(), 0600), 0);
  auto fifo = ReadLogSlice(tmp.Join("stderr.log"), 0, 100);  // at once: no writer needed
  EXPECT_TRUE(absl::IsPermissionDenied(fifo.status())) << fifo.status();
}

TEST(AgentSetupTest, AgentIdIsStoredAndGuarded) {
  testing::TempDir tmp;
  auto id = ResolveAgentId(tmp.path(), "node-a");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "node-a");
  EXPECT_EQ(*ResolveAgentId(tmp.path(), ""), "node-a");
  auto other = ResolveAgentId(tmp.path(), "node-b");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("belongs to agent 'node-a'"), absl::string_view::npos);
}

TEST(AgentSetupTest, OneAgentPerStateDir) {
  testing::TempDir tmp;
  auto first = LockStateDir(tmp.path());
  ASSERT_TRUE(first.ok());
  // flock locks belong to the open file description, so a second open conflicts.
  auto second = LockStateDir(tmp.path());
  EXPECT_FALSE(second.ok());
  ::close(*first);
}

TEST(AgentSetupTest, ParsesFlagValues) {
  EXPECT_EQ(ParseLabel("zone=eu-1")->second, "eu-1");
  EXPECT_FALSE(ParseLabel("novalue").ok());
}

}  // namespace
}  // namespace longhaul::agent
