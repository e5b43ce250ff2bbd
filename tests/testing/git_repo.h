// git in a test's temporary repository: no user or system config, a fixed identity, so that
// commits work on any machine. For tests of what the CLI records of a workflow file's work tree.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/command.h"
#include "core/strings.h"

namespace longhaul::testing {

// Runs `git -C repo ARGS...`; a failure fails the test. Returns its stdout ("" on failure).
inline std::string RunGitInRepo(const std::string& repo, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  longhaul::CommandInput in;
  in.env = {{"GIT_AUTHOR_NAME", "t"},           {"GIT_AUTHOR_EMAIL", "t@x"},
            {"GIT_COMMITTER_NAME", "t"},        {"GIT_COMMITTER_EMAIL", "t@x"},
            {"GIT_CONFIG_GLOBAL", "/dev/null"}, {"GIT_CONFIG_NOSYSTEM", "1"}};
  Result<longhaul::CommandResult> r = longhaul::RunCommand(argv, 20'000, in);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return "";
  EXPECT_EQ(r->exit_code, 0) << StrJoin(argv, " ") << ": " << r->err;
  return r->exit_code == 0 ? r->out : "";
}

}  // namespace longhaul::testing
