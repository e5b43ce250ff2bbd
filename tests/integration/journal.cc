#include "tests/integration/journal.h"

#include <sstream>

#include "core/strings.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {
namespace {

// One write(2) with O_APPEND per line, so concurrent stages never interleave inside a line.
std::string AppendLine(const std::string& journal) {
  return StrCat("echo \"$LONGHAUL_STAGE $LONGHAUL_ATTEMPT\" >> '", journal, "'");
}

}  // namespace

std::string YamlQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "''";
    else
      out += c;
  }
  return out + "'";
}

std::string YamlList(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& i : items) quoted.push_back(YamlQuote(i));
  return StrCat("[", StrJoin(quoted, ", "), "]");
}

std::string StageYaml(const std::string& name, const std::string& run,
                      const std::vector<std::string>& needs,
                      const std::vector<std::string>& extra) {
  std::string out = StrCat("  ", name, ":\n");
  if (!needs.empty()) out += StrCat("    needs: [", StrJoin(needs, ", "), "]\n");
  for (const std::string& line : extra) out += StrCat("    ", line, "\n");
  return out + StrCat("    run: ", run, "\n");
}

std::string JournaledRun(const std::string& journal, const std::vector<std::string>& testjob_args) {
  // "$@" keeps each argument one argv element: templates expanded by the coordinator reach
  // lh-testjob untouched by the shell.
  std::vector<std::string> argv = {
      "/bin/sh", "-c", StrCat(AppendLine(journal), " && exec lh-testjob \"$@\""), "lh-testjob"};
  argv.insert(argv.end(), testjob_args.begin(), testjob_args.end());
  return YamlList(argv);
}

std::string JournaledScript(const std::string& journal, const std::string& script) {
  return YamlList({"/bin/sh", "-c", StrCat(AppendLine(journal), "; ", script)});
}

std::vector<std::string> JournalLines(const std::string& journal) {
  std::vector<std::string> out;
  std::istringstream in(ReadTextFile(journal));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::map<std::string, int> JournalCounts(const std::string& journal) {
  std::map<std::string, int> counts;
  for (const std::string& line : JournalLines(journal)) {
    counts[line.substr(0, line.find(' '))]++;
  }
  return counts;
}

}  // namespace longhaul::testing
