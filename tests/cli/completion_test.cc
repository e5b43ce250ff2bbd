// `longhaul completion bash`: the script, loaded into a real bash, completes subcommands,
// nested subcommands and each command's own flags, as the command line defines them.
#include <gtest/gtest.h>

#include "tests/testing/test_util.h"

namespace longhaul::testing {
namespace {

// What bash offers for the words `line` (the last one is being completed).
std::string Complete(const std::string& line) {
  std::string script = "eval \"$('" + BinPath("longhaul") +
                       "' completion bash)\"\n"
                       "COMP_WORDS=(" + line + ")\n"
                       "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
                       "_longhaul\n"
                       "echo \"${COMPREPLY[*]}\"\n";
  CommandResult r = RunCommand({"/bin/bash", "-c", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(CompletionTest, BashCompletesCommandsSubcommandsAndFlags) {
  EXPECT_EQ(Complete("longhaul lo"), "logs\n");
  EXPECT_EQ(Complete("longhaul logs 1 train --gr"), "--grep\n");
  EXPECT_EQ(Complete("longhaul token n"), "new\n");
  EXPECT_EQ(Complete("longhaul token new admin ada --o"), "--out\n");
  EXPECT_EQ(Complete("longhaul --json sh"), "show\n");
  EXPECT_EQ(Complete("longhaul pivot 3 --fr"), "--from\n");
}

TEST(CompletionTest, AnotherShellIsRefused) {
  CommandResult r = RunCommand({BinPath("longhaul"), "completion", "fish"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'fish' is not a shell longhaul completes; bash or zsh"),
            std::string::npos)
      << r.err;
  r = RunCommand({BinPath("longhaul"), "completion", "zsh"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("bashcompinit"), std::string::npos);
}

}  // namespace
}  // namespace longhaul::testing
