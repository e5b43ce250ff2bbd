// The workflow file's git work tree as `submit` records it, on real temporary repositories.
#include "cli/source_state.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>

#include "core/command.h"
#include "core/hash.h"
#include "core/strings.h"
#include "tests/testing/git_repo.h"
#include "tests/testing/test_util.h"

namespace longhaul::cli {
namespace {

class SourceStateTest : public ::testing::Test {
 protected:
  std::string Git(const std::vector<std::string>& args) {
    return testing::RunGitInRepo(repo_, args);
  }
  void SetUp() override {
    repo_ = dir_.Join("repo");
    std::filesystem::create_directories(repo_);
    Git({"init", "-q", "-b", "main"});
    testing::WriteTextFile(repo_ + "/wf.yaml", "name: w\nstages:\n  a: {run: [x]}\n");
    testing::WriteTextFile(repo_ + "/model.py", "print(1)\n");
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "first"});
  }
  testing::TempDir dir_;
  std::string repo_;
};

TEST_F(SourceStateTest, ACleanTreeRecordsCommitAndBranch) {
  v1::SourceState s = ReadSourceState(repo_ + "/wf.yaml");
  EXPECT_EQ(s.kind(), "git");
  EXPECT_EQ(s.commit(), std::string(StripWhitespace(Git({"rev-parse", "HEAD"}))));
  EXPECT_EQ(s.commit().size(), 40u);
  EXPECT_EQ(s.branch(), "main");
  EXPECT_FALSE(s.dirty());
  EXPECT_EQ(s.diff_sha256(), "");
  EXPECT_EQ(s.note(), "");
  EXPECT_NE(SourceStateLine(s).find("(main, clean)"), std::string::npos) << SourceStateLine(s);
}

TEST_F(SourceStateTest, ADirtyTreeRecordsTheDiffAndItsHash) {
  testing::WriteTextFile(repo_ + "/model.py", "print(2)\n");
  v1::SourceState s = ReadSourceState(repo_ + "/wf.yaml");
  ASSERT_EQ(s.kind(), "git");
  EXPECT_TRUE(s.dirty());
  std::string diff = Git({"diff", "--no-color", "--no-ext-diff", "HEAD"});
  ASSERT_FALSE(diff.empty());
  EXPECT_EQ(s.diff_sha256(), Sha256Hex(diff));
  EXPECT_EQ(s.diff(), diff);
  EXPECT_EQ(s.diff_bytes(), static_cast<int64_t>(diff.size()));
  EXPECT_FALSE(s.diff_truncated());
  EXPECT_NE(s.diff().find("+print(2)"), std::string::npos);
}

TEST_F(SourceStateTest, AHugeDiffIsHashedWholeAndKeptInPart) {
  std::string big;
  for (int i = 0; i < 40'000; ++i) big += StrCat("line ", i, " of a generated file\n");
  testing::WriteTextFile(repo_ + "/model.py", big);
  v1::SourceState s = ReadSourceState(repo_ + "/wf.yaml");
  std::string diff = Git({"diff", "--no-color", "--no-ext-diff", "HEAD"});
  ASSERT_GT(static_cast<int64_t>(diff.size()), kSourceDiffLimit);
  EXPECT_EQ(s.diff_sha256(), Sha256Hex(diff));
  EXPECT_EQ(s.diff_bytes(), static_cast<int64_t>(diff.size()));
  EXPECT_TRUE(s.diff_truncated());
  EXPECT_EQ(s.diff(), diff.substr(0, kSourceDiffLimit));
}

TEST_F(SourceStateTest, DetachedHeadAndAnUntrackedWorkflowAreSaid) {
  Git({"checkout", "-q", "--detach"});
  testing::WriteTextFile(repo_ + "/new.yaml", "name: n\nstages:\n  a: {run: [x]}\n");
  v1::SourceState s = ReadSourceState(repo_ + "/new.yaml");
  EXPECT_EQ(s.kind(), "git");
  EXPECT_EQ(s.branch(), "");
  EXPECT_FALSE(s.dirty()) << "an untracked file is not a change to the commit";
  EXPECT_EQ(s.note(), "the workflow file is not tracked by git");
}

TEST_F(SourceStateTest, NoRepositoryAndNoGitAreRecordedNotErrors) {
  std::filesystem::create_directories(dir_.Join("plain"));
  testing::WriteTextFile(dir_.Join("plain/wf.yaml"), "name: w\n");
  v1::SourceState plain = ReadSourceState(dir_.Join("plain/wf.yaml"));
  EXPECT_EQ(plain.kind(), "not_a_repository");
  EXPECT_EQ(SourceStateLine(plain), "not in a git repository");
  v1::SourceState no_git = ReadSourceState(repo_ + "/wf.yaml", "/nonexistent/bin/git");
  EXPECT_EQ(no_git.kind(), "no_git");
  EXPECT_EQ(no_git.commit(), "");
}

TEST_F(SourceStateTest, AGitThatHangsIsCutAtTheDeadline) {
  std::string fake = dir_.Join("slowgit");
  testing::WriteTextFile(fake, "#!/bin/sh\nexec sleep 30\n");
  ASSERT_EQ(::chmod(fake.c_str(), 0755), 0);
  auto t0 = std::chrono::steady_clock::now();
  v1::SourceState s = ReadSourceState(repo_ + "/wf.yaml", fake, /*timeout_ms=*/200);
  EXPECT_EQ(s.kind(), "unknown");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

}  // namespace
}  // namespace longhaul::cli
