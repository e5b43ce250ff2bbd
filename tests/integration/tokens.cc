#include "tests/integration/tokens.h"

#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace longhaul::testing {

Tokens MakeTokens(TempDir& dir, const std::vector<std::pair<std::string, std::string>>& who) {
  Tokens t;
  t.file = dir.Join("tokens");
  std::string lines = "# role name hash\n";
  for (const auto& [role, name] : who) {
    std::string out = dir.Join(name + ".token");
    CommandResult r = RunCommand({BinPath("longhaul"), "token", "new", role, name, "--out", out});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    lines += r.out;
    t.by_name[name] = SplitLines(ReadTextFile(out)).at(0);
  }
  WriteTextFile(t.file, lines);
  return t;
}

void AddTeams(const Tokens& t, const std::map<std::string, std::string>& team_of) {
  std::string out;
  for (const std::string& line : SplitLines(ReadTextFile(t.file))) {
    std::string with = line;
    for (const auto& [name, team] : team_of) {
      if (line.find(" " + name + " ") != std::string::npos) with += " " + team;
    }
    out += with + "\n";
  }
  WriteTextFile(t.file, out);
}

}  // namespace longhaul::testing
