// The docs and the binaries agree on every command and flag: each flag a `--help` page lists is
// documented where that program's flags are, and each flag the docs pass to longhaul,
// longhauld or longhaul-agent exists. The real binaries are asked; the docs are read from the
// source tree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/strings.h"
#include "tests/docs/doc_flags.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {
namespace {

// Where each program's flags are documented: a flag table (rows "| `--flag ARG` | ...") in one
// of these pages. A page that does not exist is skipped.
struct FlagDocs {
  std::string program;
  std::vector<std::string> pages;
};
const std::vector<FlagDocs> kDaemonFlagDocs = {
    {"longhauld", {"docs/coordinator.md", "docs/http-api.md"}},
    {"longhaul-agent", {"docs/agent.md", "docs/slurm.md"}},
};
// The CLI: global flags in this page's table, each command's in its `### command` section.
constexpr char kCliPage[] = "docs/cli.md";

std::string Page(const std::string& rel) { return ReadTextFile(SourceDir() + "/" + rel); }

HelpPage Help(const std::vector<std::string>& args) {
  std::vector<std::string> argv = args;
  argv[0] = BinPath(argv[0]);
  argv.push_back("--help");
  CommandResult r = RunCommand(argv, {}, 30'000);
  EXPECT_EQ(r.exit_code, 0) << StrJoin(args, " ") << " --help: " << r.err;
  HelpPage page = ParseHelp(r.out);
  EXPECT_NE(r.out.find("\nOptions:\n"), std::string::npos)
      << StrJoin(args, " ") << " --help has no Options section:\n"
      << r.out;
  return page;
}

bool Documented(const std::vector<std::string>& names, const std::set<std::string>& documented) {
  for (const auto& n : names) {
    if (documented.count(n)) return true;
  }
  return false;
}

// The flags of `longhaul COMMAND` and of its own subcommands (`longhaul token new --out`).
std::set<std::string> CommandFlags(const std::string& command) {
  HelpPage page = Help({"longhaul", command});
  std::set<std::string> names = page.AllNames();
  for (const std::string& sub : page.subcommands) {
    std::set<std::string> more = Help({"longhaul", command, sub}).AllNames();
    names.insert(more.begin(), more.end());
  }
  return names;
}

TEST(DocsFlagsTest, ParsesCli11HelpPages) {
  HelpPage page = ParseHelp(
      "Usage: longhaul logs [OPTIONS] run stage\n\nPositionals:\n"
      "  run INT REQUIRED            run id\n\nOptions:\n"
      "  -h,--help                   Print this help message and exit\n"
      "  -f,--follow                 keep printing\n"
      "  --a-very-long-option-name TEXT=x\n"
      "                              --not-a-flag in a wrapped description\n\n"
      "Subcommands:\n  submit                      start a run\n");
  EXPECT_EQ(page.options, (std::vector<std::vector<std::string>>{{"-f", "--follow"},
                                                                 {"--a-very-long-option-name"}}));
  EXPECT_EQ(page.subcommands, std::vector<std::string>{"submit"});
  EXPECT_EQ(FlagOf("[--tail"), "--tail");
  EXPECT_EQ(FlagOf("--set=a"), "--set");
  EXPECT_EQ(FlagOf("-f]"), "-f");
  EXPECT_EQ(FlagOf("--"), "");
  EXPECT_EQ(FlagOf("-1"), "");
  std::vector<CommandUse> uses = FindCommandUses(
      "x `longhaul show RUN --json` and\n```\nRUN=$(build/bin/longhaul submit f --watch)\n"
      "longhaul-agent --id a \\\n  --label k=v | grep x --y\n```\n",
      {"longhaul", "longhaul-agent"});
  ASSERT_EQ(uses.size(), 3u);
  EXPECT_EQ(uses[0].words[0], "show");
  EXPECT_EQ(uses[0].flags, std::vector<std::string>{"--json"});
  EXPECT_EQ(uses[1].flags, std::vector<std::string>{"--watch"});
  EXPECT_EQ(uses[2].program, "longhaul-agent");
  EXPECT_EQ(uses[2].flags, (std::vector<std::string>{"--id", "--label"}));
}

TEST(DocsFlagsTest, EveryCliCommandHasASectionAndEverySectionACommand) {
  HelpPage top = Help({"longhaul"});
  auto sections = SynopsisLines(Page(kCliPage), "longhaul");
  ASSERT_FALSE(sections.empty()) << "no `### command` sections in " << kCliPage;
  for (const std::string& command : top.subcommands) {
    EXPECT_TRUE(sections.count(command)) << kCliPage << " has no `### " << command << "` section";
    if (sections.count(command)) {
      EXPECT_FALSE(sections[command].empty())
          << kCliPage << ", `### " << command << "`: no synopsis line `longhaul " << command
          << " ...` in a code block";
    }
  }
  std::set<std::string> real(top.subcommands.begin(), top.subcommands.end());
  for (const auto& [command, lines] : sections) {
    EXPECT_TRUE(real.count(command))
        << kCliPage << " documents `longhaul " << command << "`, which `longhaul --help` lacks";
  }
}

TEST(DocsFlagsTest, CliFlagsMatchTheirSynopses) {
  std::string cli = Page(kCliPage);
  HelpPage top = Help({"longhaul"});
  std::set<std::string> global_doc = TableFlags(cli);
  std::set<std::string> global_real = top.AllNames();
  for (const auto& names : top.options) {
    EXPECT_TRUE(Documented(names, global_doc))
        << kCliPage << ": global flag " << names.back() << " is not in the flags table";
  }
  for (const std::string& flag : global_doc) {
    EXPECT_TRUE(global_real.count(flag))
        << kCliPage << " lists global flag " << flag << ", which `longhaul --help` lacks";
  }
  auto sections = SynopsisLines(cli, "longhaul");
  for (const std::string& command : top.subcommands) {
    HelpPage page = Help({"longhaul", command});
    std::set<std::string> synopsis;
    for (const std::string& line : sections[command]) {
      for (const CommandUse& use : FindCommandUses(line, {"longhaul"})) {
        synopsis.insert(use.flags.begin(), use.flags.end());
      }
    }
    for (const auto& names : page.options) {
      if (Documented(names, global_real)) continue;  // a global flag, shown by fallthrough
      EXPECT_TRUE(Documented(names, synopsis))
          << kCliPage << ": the synopsis of `longhaul " << command << "` lacks " << names.back();
    }
    std::set<std::string> real = CommandFlags(command);
    for (const std::string& flag : synopsis) {
      EXPECT_TRUE(real.count(flag) || global_real.count(flag))
          << kCliPage << ": `longhaul " << command << "` has no flag " << flag;
    }
  }
}

TEST(DocsFlagsTest, DaemonFlagsMatchTheirTables) {
  for (const FlagDocs& docs : kDaemonFlagDocs) {
    HelpPage page = Help({docs.program});
    std::set<std::string> documented;
    std::map<std::string, std::string> where;
    for (const std::string& rel : docs.pages) {
      for (const std::string& flag : TableFlags(Page(rel))) {
        documented.insert(flag);
        where[flag] = rel;
      }
    }
    for (const auto& names : page.options) {
      EXPECT_TRUE(Documented(names, documented))
          << docs.program << " " << names.back() << " is in no flag table of "
          << StrJoin(docs.pages, " or ");
    }
    std::set<std::string> real = page.AllNames();
    for (const std::string& flag : documented) {
      EXPECT_TRUE(real.count(flag)) << where[flag] << " documents " << docs.program << " " << flag
                                    << ", which `" << docs.program << " --help` lacks";
    }
  }
}

// The config file keys of each daemon (docs/operations.md, "Configuration reference": a table
// `| \`key\` | default | \`--key\` |` under `### PROGRAM`) are exactly its long flags without
// the dashes, less --help, --config, --check-config and the one-shot --backup.
TEST(DocsFlagsTest, ConfigKeysMatchTheFlags) {
  const std::string page = Page("docs/operations.md");
  auto reference = page.find("## Configuration reference");
  ASSERT_NE(reference, std::string::npos) << "docs/operations.md has no Configuration reference";
  for (const FlagDocs& docs : kDaemonFlagDocs) {
    std::set<std::string> expected;
    for (const std::string& name : Help({docs.program}).AllNames()) {
      if (name.rfind("--", 0) != 0 || name == "--config" || name == "--check-config" ||
          name == "--backup") {
        continue;
      }
      expected.insert(name.substr(2));
    }
    auto start = page.find("\n### " + docs.program + "\n", reference);
    ASSERT_NE(start, std::string::npos) << "no ### " << docs.program << " in the reference";
    auto end = page.find("\n#", start + 1);
    std::set<std::string> documented;
    for (const std::string& line : SplitLines(page.substr(start, end - start))) {
      if (line.rfind("| `", 0) != 0) continue;
      std::string key = line.substr(3, line.find('`', 3) - 3);
      documented.insert(key);
      EXPECT_NE(line.find("| `--" + key + "` |"), std::string::npos)
          << "docs/operations.md: the row of key " << key << " should name the flag --" << key;
    }
    EXPECT_EQ(documented, expected) << docs.program << "'s config keys in docs/operations.md";
  }
}

// Every command line in the docs and the README passes only flags its program has.
TEST(DocsFlagsTest, EveryFlagTheDocsPassExists) {
  HelpPage top = Help({"longhaul"});
  std::map<std::string, std::set<std::string>> cli_flags;
  for (const std::string& command : top.subcommands) {
    cli_flags[command] = CommandFlags(command);
  }
  std::map<std::string, std::set<std::string>> daemon_flags;
  for (const FlagDocs& docs : kDaemonFlagDocs) {
    daemon_flags[docs.program] = Help({docs.program}).AllNames();
    daemon_flags[docs.program].insert("--help");
  }
  std::vector<std::string> pages = {"README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(SourceDir() + "/docs")) {
    if (entry.path().extension() == ".md")
      pages.push_back("docs/" + entry.path().filename().string());
  }
  int checked = 0;
  for (const std::string& rel : pages) {
    std::set<std::string> programs = {"longhaul"};
    for (const FlagDocs& docs : kDaemonFlagDocs) programs.insert(docs.program);
    for (const CommandUse& use : FindCommandUses(Page(rel), programs)) {
      std::set<std::string> allowed;
      std::string what = use.program;
      if (use.program == "longhaul") {
        allowed = top.AllNames();
        allowed.insert("--help");
        for (const std::string& word : use.words) {
          if (!cli_flags.count(word)) continue;
          allowed.insert(cli_flags[word].begin(), cli_flags[word].end());
          what += " " + word;
          break;
        }
      } else {
        allowed = daemon_flags[use.program];
      }
      for (const std::string& flag : use.flags) {
        ++checked;
        EXPECT_TRUE(allowed.count(flag))
            << rel << ":" << use.line << ": `" << what << "` has no flag " << flag;
      }
    }
  }
  EXPECT_GT(checked, 20) << "found almost no command lines in the docs: is the parser broken?";
}

}  // namespace
}  // namespace longhaul::testing
