#include "cli/exit_codes.h"

#include <gtest/gtest.h>

#include "cli/cli_env.h"
#include "cli/coordinator.h"
#include "core/fs.h"
#include "tests/testing/test_util.h"

namespace longhaul::cli {
namespace {

TEST(ExitCodesTest, StatusCodesMapToTheDocumentedTable) {
  EXPECT_EQ(ExitCodeForStatus(OkStatus()), 0);
  EXPECT_EQ(ExitCodeForStatus(absl::NotFoundError("no run 9")), 3);
  EXPECT_EQ(ExitCodeForStatus(absl::InvalidArgumentError("x")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::FailedPreconditionError("x")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::UnavailableError("x")), 4);
  EXPECT_EQ(ExitCodeForStatus(absl::DeadlineExceededError("x")), 4);
  EXPECT_EQ(ExitCodeForStatus(absl::InternalError("x")), 10);
  EXPECT_EQ(ExitCodeForStatus(absl::UnauthenticatedError("x")), 6);
  EXPECT_EQ(ExitCodeForStatus(absl::PermissionDeniedError("x")), 7);
  EXPECT_EQ(ExitCodeForStatus(absl::UnimplementedError("x")), 10);
}

TEST(ExitCodesTest, RunResults) {
  EXPECT_EQ(ExitCodeForRun(v1::RUN_SUCCEEDED), 0);
  EXPECT_EQ(ExitCodeForRun(v1::RUN_FAILED), 1);
  EXPECT_EQ(ExitCodeForRun(v1::RUN_CANCELLED), 5);
  EXPECT_EQ(ExitCodeForRun(v1::RUN_RUNNING), 10);
}

TEST(ExitCodesTest, UnreachableMarkSurvivesOnlyWhereSet) {
  Status plain = absl::UnavailableError("agent node-a is not connected");
  EXPECT_FALSE(IsCoordinatorUnreachable(plain));
  Status marked = MarkCoordinatorUnreachable(absl::UnavailableError("cannot reach"));
  EXPECT_TRUE(IsCoordinatorUnreachable(marked));
  EXPECT_EQ(ExitCodeForStatus(marked), 4);
}

TEST(CoordinatorAddressTest, FlagThenEnvThenFileThenDefault) {
  testing::TempDir dir;
  CliEnv env;
  env.cwd = dir.path();
  EXPECT_EQ(ResolveCoordinatorAddress("", env), "127.0.0.1:7070");
  ASSERT_TRUE(MakeDirs(dir.Join(".longhaul")).ok());
  testing::WriteTextFile(dir.Join(".longhaul/coordinator.addr"), "127.0.0.1:45678\n");
  EXPECT_EQ(ResolveCoordinatorAddress("", env), "127.0.0.1:45678");
  env.vars["LONGHAUL_COORDINATOR"] = "coord:7000";
  EXPECT_EQ(ResolveCoordinatorAddress("", env), "coord:7000");
  EXPECT_EQ(ResolveCoordinatorAddress("flag:1", env), "flag:1");
}

}  // namespace
}  // namespace longhaul::cli
