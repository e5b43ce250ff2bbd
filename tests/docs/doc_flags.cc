#include "tests/docs/doc_flags.h"

#include <cctype>
#include <sstream>

#include "core/strings.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {
namespace {

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string Trim(const std::string& s) { return std::string(StripWhitespace(s)); }

std::string Basename(std::string word) {
  while (!word.empty() && (word.front() == '"' || word.front() == '\'')) word.erase(0, 1);
  while (!word.empty() && (word.back() == '"' || word.back() == '\'')) word.pop_back();
  size_t slash = word.rfind('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

}  // namespace

std::set<std::string> HelpPage::AllNames() const {
  std::set<std::string> out;
  for (const auto& names : options) out.insert(names.begin(), names.end());
  return out;
}

HelpPage ParseHelp(const std::string& text) {
  HelpPage page;
  std::string section;
  for (const std::string& line : SplitLines(text)) {
    if (!line.empty() && line[0] != ' ') {
      section = line;
      continue;
    }
    // An item starts two spaces in; its description may continue further in.
    if (line.size() < 3 || line.compare(0, 2, "  ") != 0 || line[2] == ' ') continue;
    std::string first = Words(line)[0];
    if (section == "Options:") {
      std::vector<std::string> names;
      std::stringstream parts(first);
      for (std::string name; std::getline(parts, name, ',');) names.push_back(name);
      if (names != std::vector<std::string>{"-h", "--help"}) page.options.push_back(names);
    } else if (section == "Subcommands:") {
      page.subcommands.push_back(first);
    }
  }
  return page;
}

std::string FlagOf(const std::string& token) {
  size_t i = 0;
  while (i < token.size() && (token[i] == '[' || token[i] == '(' || token[i] == '"')) ++i;
  size_t dashes = 0;
  while (i + dashes < token.size() && token[i + dashes] == '-') ++dashes;
  if (dashes == 0 || dashes > 2) return "";
  size_t end = i + dashes;
  if (end >= token.size() || !std::isalpha(static_cast<unsigned char>(token[end]))) return "";
  while (end < token.size() &&
         (std::isalnum(static_cast<unsigned char>(token[end])) || token[end] == '-')) {
    ++end;
  }
  return token.substr(i, end - i);
}

std::set<std::string> TableFlags(const std::string& markdown) {
  std::set<std::string> out;
  for (const std::string& line : SplitLines(markdown)) {
    if (line.rfind("| `-", 0) != 0) continue;
    size_t end = line.find('|', 1);
    for (const std::string& word : Words(line.substr(1, end - 1))) {
      std::string w = word;
      if (!w.empty() && w[0] == '`') w.erase(0, 1);
      std::string flag = FlagOf(w);
      if (!flag.empty()) out.insert(flag);
    }
  }
  return out;
}

std::map<std::string, std::vector<std::string>> SynopsisLines(const std::string& markdown,
                                                              const std::string& program) {
  std::map<std::string, std::vector<std::string>> out;
  std::vector<std::string> commands;
  bool in_code = false;
  for (const std::string& line : SplitLines(markdown)) {
    if (line.rfind("```", 0) == 0) {
      in_code = !in_code;
      continue;
    }
    if (!in_code && line.rfind("#", 0) == 0) {
      commands.clear();
      if (line.rfind("### ", 0) == 0) {
        std::stringstream names(line.substr(4));
        for (std::string name; std::getline(names, name, ',');) {
          commands.push_back(Trim(name));
          out[commands.back()];
        }
      }
      continue;
    }
    if (!in_code) continue;
    std::vector<std::string> words = Words(line);
    if (words.size() < 2 || words[0] != program) continue;
    for (const std::string& command : commands) {
      if (words[1] == command) out[command].push_back(line);
    }
  }
  return out;
}

std::vector<CommandUse> FindCommandUses(const std::string& markdown,
                                        const std::set<std::string>& programs) {
  std::vector<CommandUse> uses;
  std::vector<std::string> lines = SplitLines(markdown);
  for (size_t i = 0; i < lines.size(); ++i) {
    int number = static_cast<int>(i) + 1;
    std::string line = lines[i];
    while (!line.empty() && line.back() == '\\' && i + 1 < lines.size()) {
      line.pop_back();
      line += " " + lines[++i];
    }
    // Segments: the text between backticks and stops.
    std::vector<std::string> segments(1);
    for (char c : line) {
      if (std::string_view("`|;&#()").find(c) != std::string_view::npos) {
        segments.emplace_back();
      } else {
        segments.back() += c;
      }
    }
    for (const std::string& segment : segments) {
      std::vector<std::string> words = Words(segment);
      for (size_t w = 0; w < words.size(); ++w) {
        std::string program = Basename(words[w]);
        if (!programs.count(program)) continue;
        CommandUse use;
        use.line = number;
        use.program = program;
        for (size_t k = w + 1; k < words.size(); ++k) {
          if (words[k] == "--") break;  // what follows belongs to another program
          std::string flag = FlagOf(words[k]);
          if (flag.empty()) {
            use.words.push_back(words[k]);
          } else {
            use.flags.push_back(flag);
          }
        }
        uses.push_back(std::move(use));
        break;
      }
    }
  }
  return uses;
}

}  // namespace longhaul::testing
