// Tokens for tests of a longhauld started with --tokens: made with the real
// `longhaul token new`, one per (role, name), and the tokens file that lists them.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/testing/test_util.h"

namespace longhaul::testing {

struct Tokens {
  std::string file;                            // the tokens file, for --tokens
  std::map<std::string, std::string> by_name;  // name -> token
};

// Writes the tokens file into `dir`; fails the current test if `longhaul token new` fails.
Tokens MakeTokens(TempDir& dir, const std::vector<std::pair<std::string, std::string>>& who);

// Gives each named holder's token line in `t.file` its team (the fourth column).
void AddTeams(const Tokens& t, const std::map<std::string, std::string>& team_of);

}  // namespace longhaul::testing
