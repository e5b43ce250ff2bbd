// A ClusterTest whose longhauld checks tokens (MakeTokens, AddTeams): the CLI run as one of
// their holders, for tests of who may do what on a shared coordinator.
#pragma once

#include <string>
#include <vector>

#include "tests/integration/cluster.h"
#include "tests/integration/tokens.h"

namespace longhaul::testing {

class TokensClusterTest : public ClusterTest {
 protected:
  // `longhaul ARGS...` against the cluster with `who`'s token.
  CommandResult As(const std::string& who, std::vector<std::string> args) {
    std::vector<std::string> argv = {BinPath("longhaul")};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, {{"LONGHAUL_COORDINATOR", cluster().address()},
                             {"LONGHAUL_TOKEN", tokens_.by_name[who]}});
  }

  TempDir dir_;
  Tokens tokens_;
};

}  // namespace longhaul::testing
