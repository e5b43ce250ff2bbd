// `longhaul token new|hash --team`: the tokens-file line with its TEAM column
// (docs/security.md), read back by longhauld's own parser; a bad team is refused, no file made.
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/strings.h"
#include "daemon/auth/token_store.h"
#include "tests/testing/test_util.h"

namespace longhaul::cli {
namespace {

using longhaul::testing::BinPath;
using longhaul::testing::CommandResult;
using longhaul::testing::RunCommand;

TEST(TokenTeamTest, NewAndHashPrintTheLineWithItsTeam) {
  longhaul::testing::TempDir dir;
  std::string file = dir.Join("olga.token");
  CommandResult made = RunCommand(
      {BinPath("longhaul"), "token", "new", "operator", "olga", "--team", "vision", "--out", file},
      {}, 30'000);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  Result<std::vector<auth::TokenEntry>> entries = auth::ParseTokens(made.out, "out");
  ASSERT_TRUE(entries.ok()) << entries.status() << ": " << made.out;
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].name, "olga");
  EXPECT_EQ((*entries)[0].team, "vision");

  // hash gives the same line for the token in the file.
  CommandResult hashed =
      RunCommand({BinPath("longhaul"), "token", "hash", "operator", "olga", "--team", "vision"}, {},
                 30'000, longhaul::testing::ReadTextFile(file));
  ASSERT_EQ(hashed.exit_code, 0) << hashed.err;
  EXPECT_EQ(hashed.out, made.out);
  // Without --team, the line has three fields, as before.
  hashed = RunCommand({BinPath("longhaul"), "token", "hash", "operator", "olga"}, {}, 30'000,
                      longhaul::testing::ReadTextFile(file));
  ASSERT_EQ(hashed.exit_code, 0) << hashed.err;
  EXPECT_EQ(StrSplit(std::string(StripWhitespace(hashed.out)), ' ').size(), 3u) << hashed.out;
}

TEST(TokenTeamTest, ABadTeamIsRefusedAndNoTokenIsMade) {
  longhaul::testing::TempDir dir;
  for (std::string team : {"vi sion", "vision/2"}) {
    std::string file = dir.Join("t.token");
    CommandResult r = RunCommand(
        {BinPath("longhaul"), "token", "new", "operator", "olga", "--team", team, "--out", file},
        {}, 30'000);
    EXPECT_EQ(r.exit_code, 2) << team;
    EXPECT_EQ(r.err,
              StrCat("longhaul: --team '", team, "' may hold only letters, digits and . _ - @\n"));
    EXPECT_NE(::access(file.c_str(), F_OK), 0) << team;
  }
}

}  // namespace
}  // namespace longhaul::cli
