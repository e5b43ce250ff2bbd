// RemoveAttemptFiles: what the agent removes for retention, and what it refuses to.
#include "agent/lib/retention.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/fs.h"
#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

using testing::TempDir;

bool Exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

void WriteBytes(const std::string& path, size_t n) {
  std::ofstream(path) << std::string(n, 'x');
}

class RetentionFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = tmp_.Join("state");
    data_ = tmp_.Join("data");
    ASSERT_TRUE(MakeDirs(state_ + "/attempts").ok());
    ASSERT_TRUE(MakeDirs(data_ + "/runs/1/make/attempt-1").ok());
    WriteBytes(data_ + "/runs/1/make/attempt-1/big.bin", 200'000);
  }
  // An attempt dir with a log; `done` when the coordinator has its exit.
  std::string Attempt(int64_t id, bool done) {
    std::string dir = state_ + "/attempts/" + std::to_string(id);
    EXPECT_TRUE(MakeDirs(dir).ok());
    WriteBytes(dir + "/stdout.log", 10'000);
    if (done) WriteBytes(dir + "/done", 10);
    return dir;
  }
  TempDir tmp_;
  std::string state_, data_;
};

TEST_F(RetentionFilesTest, RemovesDoneAttemptsAndOutputDirsAndCountsTheirBytes) {
  std::string a = Attempt(7, true);
  v1::RemoveAttempts req;
  req.set_request_id(3);
  req.add_attempt_ids(7);
  req.add_output_dirs(data_ + "/runs/1/make/attempt-1");
  v1::AttemptsRemoved out = RemoveAttemptFiles(req, state_, data_);
  EXPECT_EQ(out.request_id(), 3);
  EXPECT_EQ(out.attempt_dirs(), 1);
  EXPECT_EQ(out.output_dirs(), 1);
  EXPECT_GE(out.bytes(), 210'000);
  EXPECT_TRUE(out.errors().empty());
  EXPECT_FALSE(Exists(a));
  EXPECT_FALSE(Exists(data_ + "/runs/1")) << "empty parents go too";
  EXPECT_TRUE(Exists(data_));
}

TEST_F(RetentionFilesTest, ADryRunMeasuresTheSameAndRemovesNothing) {
  std::string a = Attempt(7, true);
  v1::RemoveAttempts req;
  req.set_dry_run(true);
  req.add_attempt_ids(7);
  req.add_output_dirs(data_ + "/runs/1/make/attempt-1");
  v1::AttemptsRemoved out = RemoveAttemptFiles(req, state_, data_);
  EXPECT_EQ(out.attempt_dirs(), 1);
  EXPECT_EQ(out.output_dirs(), 1);
  EXPECT_GE(out.bytes(), 210'000);
  EXPECT_TRUE(Exists(a));
  EXPECT_TRUE(Exists(data_ + "/runs/1/make/attempt-1/big.bin"));
}

TEST_F(RetentionFilesTest, KeepsLiveAttemptsAndRefusesPathsOutsideTheDataDir) {
  std::string live = Attempt(8, false);
  std::string outside = tmp_.Join("elsewhere");
  ASSERT_TRUE(MakeDirs(outside).ok());
  ASSERT_EQ(::symlink(outside.c_str(), (data_ + "/link").c_str()), 0);
  v1::RemoveAttempts req;
  req.add_attempt_ids(8);
  req.add_attempt_ids(9);  // gone already: nothing to do, no error
  req.add_output_dirs(outside);
  req.add_output_dirs(data_ + "/runs/../../elsewhere");
  req.add_output_dirs(data_ + "/link/x");
  req.add_output_dirs(data_);
  v1::AttemptsRemoved out = RemoveAttemptFiles(req, state_, data_);
  EXPECT_EQ(out.attempt_dirs(), 0);
  EXPECT_EQ(out.output_dirs(), 0);
  ASSERT_EQ(out.errors_size(), 5) << out.DebugString();
  EXPECT_NE(out.errors(0).find("does not have its exit yet"), std::string::npos);
  EXPECT_NE(out.errors(1).find("not inside the agent's data dir"), std::string::npos);
  EXPECT_TRUE(Exists(live));
  EXPECT_TRUE(Exists(outside));
  EXPECT_TRUE(Exists(data_));
}

}  // namespace
}  // namespace longhaul::agent
