// Reading deploy/systemd and deploy/config for tests (units.h).
#include "tests/deploy/units.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "core/strings.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {

std::map<std::string, std::string> ServiceKeys(const std::string& unit) {
  std::string text = ReadTextFile(SourceDir() + "/deploy/systemd/" + unit);
  EXPECT_FALSE(text.empty()) << unit;
  std::map<std::string, std::string> keys;
  bool service = false;
  for (const std::string& line : SplitLines(text)) {
    if (!line.empty() && line[0] == '[') service = line == "[Service]";
    auto eq = line.find('=');
    if (service && eq != std::string::npos && line[0] != '#') {
      keys[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return keys;
}

std::vector<std::string> ExecStart(const std::string& unit, const std::string& config) {
  std::vector<std::string> argv;
  std::istringstream in(ServiceKeys(unit)["ExecStart"]);
  for (std::string word; in >> word;) {
    if (word.rfind("/usr/local/bin/", 0) == 0) word = BinDir() + word.substr(14);
    if (word.rfind("/etc/longhaul/", 0) == 0) word = config;
    argv.push_back(word);
  }
  return argv;
}

void WriteExampleConfig(const std::string& example, const std::string& path,
                        const std::map<std::string, std::string>& values) {
  std::string source = SourceDir() + "/deploy/config/" + example;
  std::string text = ReadTextFile(source);
  EXPECT_FALSE(text.empty()) << source;
  std::set<std::string> replaced;
  std::string out;
  for (const std::string& line : SplitLines(text)) {
    std::string written = line;
    for (const auto& [key, value] : values) {
      if (line.rfind(key + ": ", 0) == 0) {
        written = StrCat(key, ": ", value);
        replaced.insert(key);
      }
    }
    out += written + "\n";
  }
  for (const auto& [key, value] : values) {
    EXPECT_TRUE(replaced.count(key)) << source << " sets no key '" << key << "'";
  }
  WriteTextFile(path, out);
}

}  // namespace longhaul::testing
