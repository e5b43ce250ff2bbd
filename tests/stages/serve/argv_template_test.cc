#include "stages/serve/argv_template.h"

#include <gtest/gtest.h>

namespace longhaul::stages {
namespace {

using Argv = std::vector<std::string>;

TEST(ArgvTemplateTest, SubstitutesInsideElements) {
  auto s = SubstituteVars(R"({"model": "${drafter}", "k": ${k}})", {{"drafter", "/d"}, {"k", "4"}},
                          "here");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, R"({"model": "/d", "k": 4})");
  EXPECT_NE(SubstituteVars("${nope}", {}, "p.yaml: argv[2]")
                .status()
                .message()
                .find("p.yaml: argv[2]: undefined variable 'nope'"),
            std::string::npos);
  EXPECT_FALSE(SubstituteVars("${open", {}, "x").ok());
}

TEST(ArgvTemplateTest, ShellSplitKeepsQuotedWordsTogether) {
  auto w = ShellSplit(R"(--a 1  --b "two words" --c 'it''s' --d a\ b --e "q\"x")");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(*w, (Argv{"--a", "1", "--b", "two words", "--c", "its", "--d", "a b", "--e", "q\"x"}));
  EXPECT_TRUE(ShellSplit("   ")->empty());
  EXPECT_FALSE(ShellSplit("'open").ok());
}

EngineProfile Profile() {
  EngineProfile p;
  p.path = "e.yaml";
  p.argv = {"serve", "${model}", "--port", "${port}", "${extra_args...}"};
  p.optional = {{{"drafter"}, {"--spec", R"({"model":"${drafter}"})"}}, {{"a", "b"}, {"--ab"}}};
  p.env = {{"HOME_DIR", "/x/${model}"}};
  return p;
}

TEST(ArgvTemplateTest, OptionalSectionsOnlyWhenAllTheirVariablesAreSet) {
  TemplateVars vars = {{"model", "m"},  {"port", "80"}, {"extra_args", ""},
                       {"drafter", ""}, {"a", "1"},     {"b", ""}};
  auto cmd = RenderCommand(Profile(), vars);
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->argv, (Argv{"serve", "m", "--port", "80"}));
  EXPECT_EQ(cmd->env.at("HOME_DIR"), "/x/m");
  vars["drafter"] = "/ckpt";
  vars["b"] = "2";
  vars["extra_args"] = "--max-len 4096 --name 'a b'";
  cmd = RenderCommand(Profile(), vars);
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->argv, (Argv{"serve", "m", "--port", "80", "--max-len", "4096", "--name", "a b",
                             "--spec", R"({"model":"/ckpt"})", "--ab"}));
}

TEST(ArgvTemplateTest, EmptyElementNamesTheVariable) {
  TemplateVars vars = {{"model", ""},   {"port", "80"}, {"extra_args", ""},
                       {"drafter", ""}, {"a", ""},      {"b", ""}};
  auto cmd = RenderCommand(Profile(), vars);
  ASSERT_FALSE(cmd.ok());
  EXPECT_NE(cmd.status().message().find("e.yaml: argv[1]: '${model}' renders empty"),
            std::string::npos)
      << cmd.status();
}

}  // namespace
}  // namespace longhaul::stages
