// Reading flags out of `--help` pages (CLI11's layout) and out of the Markdown docs, so that a
// test can hold the two against each other.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace longhaul::testing {

// One `--help` page. Each option is the list of its names ("-f", "--follow"); --help itself is
// left out.
struct HelpPage {
  std::vector<std::vector<std::string>> options;
  std::vector<std::string> subcommands;

  std::set<std::string> AllNames() const;
};
HelpPage ParseHelp(const std::string& text);

// The flag at the start of `token` ("[--tail" -> "--tail", "--set=x" -> "--set", "-f]" -> "-f");
// "" when the token does not start with one ("--", "-", "-1", "ARG").
std::string FlagOf(const std::string& token);

// The flags named in the first cells of Markdown table rows ("| `--state-dir DIR` | ...").
std::set<std::string> TableFlags(const std::string& markdown);

// `### a, b` sections of a Markdown page: each command named in a heading -> the lines of the
// section's code blocks that start with `<program> <command>`.
std::map<std::string, std::vector<std::string>> SynopsisLines(const std::string& markdown,
                                                              const std::string& program);

// Where a page shows a command line, one per use: the program as written (the last path part of
// its first word: "longhaul", "longhauld", "longhaul-agent"), the first word after it that is
// not a flag nor a flag's value (for the CLI: the command), and the flags it passes. Lines of
// code blocks count, joined over trailing backslashes, as does inline code; a use ends at a
// backtick, a pipe, `;`, `&`, `#`, `(` or `)`.
struct CommandUse {
  int line = 0;  // 1-based, in the page
  std::string program;
  std::vector<std::string> words;  // non-flag words after the program, in order
  std::vector<std::string> flags;
};
std::vector<CommandUse> FindCommandUses(const std::string& markdown,
                                        const std::set<std::string>& programs);

}  // namespace longhaul::testing
