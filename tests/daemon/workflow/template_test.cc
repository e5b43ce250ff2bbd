#include "daemon/workflow/template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::workflow {
namespace {

using ::testing::HasSubstr;

TEST(TemplateTest, ParsesEveryForm) {
  auto refs = ParseTemplate("a ${params.model} ${serve.outputs.endpoint}${output_dir}/${run.id}");
  ASSERT_TRUE(refs.ok()) << refs.status();
  ASSERT_EQ(refs->size(), 4u);
  EXPECT_EQ((*refs)[0].kind, TemplateRef::kParam);
  EXPECT_EQ((*refs)[0].name, "model");
  EXPECT_EQ((*refs)[0].offset, 2u);
  EXPECT_EQ((*refs)[1].kind, TemplateRef::kOutput);
  EXPECT_EQ((*refs)[1].stage, "serve");
  EXPECT_EQ((*refs)[1].name, "endpoint");
  EXPECT_EQ((*refs)[2].kind, TemplateRef::kOutputDir);
  EXPECT_EQ((*refs)[3].kind, TemplateRef::kRunId);
}

TEST(TemplateTest, ParsesTagReferencesAndKeepsStageOutputsNamedTags) {
  auto refs = ParseTemplate("${tags.best-drafter.outputs.drafter}:${tags.best-drafter.run}"
                            ":${tags.outputs.run}");
  ASSERT_TRUE(refs.ok()) << refs.status();
  ASSERT_EQ(refs->size(), 3u);
  EXPECT_EQ((*refs)[0].kind, TemplateRef::kTagOutput);
  EXPECT_EQ((*refs)[0].stage, "best-drafter");
  EXPECT_EQ((*refs)[0].name, "drafter");
  EXPECT_EQ(TagRefKey((*refs)[0]), "best-drafter.outputs.drafter");
  EXPECT_EQ((*refs)[1].kind, TemplateRef::kTagRun);
  EXPECT_EQ(TagRefKey((*refs)[1]), "best-drafter.run");
  // A stage named 'tags' with an output 'run' reads as it did before tags existed.
  EXPECT_EQ((*refs)[2].kind, TemplateRef::kOutput);
  EXPECT_EQ((*refs)[2].stage, "tags");

  TemplateContext ctx;
  ctx.tags = [](const std::string& key) -> std::optional<std::string> {
    if (key == "best-drafter.run") return "41";
    return std::nullopt;
  };
  auto out = ExpandTemplate("run=${tags.best-drafter.run}", ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "run=41");
  auto missing = ExpandTemplate("${tags.best-drafter.outputs.drafter}", ctx);
  EXPECT_EQ(missing.status().message(),
            "${tags.best-drafter.outputs.drafter}: the submission resolved no value for tag "
            "'best-drafter'");
  TemplateContext unbound;
  unbound.keep_unbound = true;
  EXPECT_EQ(*ExpandTemplate("${tags.a.run}", unbound), "${tags.a.run}");
  EXPECT_FALSE(ParseTemplate("${tags.a.b.c}").ok());
}

TEST(TemplateTest, DollarDollarIsALiteral) {
  auto refs = ParseTemplate("$${params.x} costs $5");
  ASSERT_TRUE(refs.ok()) << refs.status();
  EXPECT_TRUE(refs->empty());
  std::map<std::string, std::string> params = {{"x", "1"}};
  TemplateContext ctx;
  ctx.params = &params;
  auto out = ExpandTemplate("$${params.x} costs $5 and ${params.x}", ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "${params.x} costs $5 and 1");
}

// A shell's ${NAME} in a `/bin/sh -c` stage is the first thing to hit this: the error says how
// to write it, and the way it says works.
TEST(TemplateTest, AnUnknownReferenceSaysHowToWriteALiteral) {
  auto r = ParseTemplate("echo ${HOME}/data");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(ToStd(r.status().message()),
              HasSubstr("'${HOME}' at offset 5: unknown reference"));
  EXPECT_THAT(ToStd(r.status().message()),
              HasSubstr("write '$${HOME}' for a literal '${HOME}'"));
  auto out = ExpandTemplate("echo $${HOME}/data", TemplateContext{});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "echo ${HOME}/data");
}

TEST(TemplateTest, MalformedFormsNameTheOffset) {
  size_t offset = 99;
  auto unclosed = ParseTemplate("ab ${params.x", &offset);
  ASSERT_FALSE(unclosed.ok());
  EXPECT_THAT(ToStd(unclosed.status().message()), HasSubstr("unclosed '${' at offset 3"));
  EXPECT_EQ(offset, 3u);
  for (const char* bad : {"${foo}", "${a.b}", "${}", "${params.}", "${a.outputs.b.c}",
                          "${params.a b}", "${run.ids}", "${a.output.b}"}) {
    auto r = ParseTemplate(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(ToStd(r.status().message()), HasSubstr("at offset 0")) << bad;
  }
}

TEST(TemplateTest, ExpandsEveryBinding) {
  std::map<std::string, std::string> params = {{"model", "/models/t"}};
  TemplateContext ctx;
  ctx.params = &params;
  ctx.outputs = [](const std::string& stage,
                   const std::string& name) -> std::optional<std::string> {
    if (stage == "serve" && name == "endpoint") return "http://10.0.0.5:30000";
    return std::nullopt;
  };
  ctx.output_dir = "/data/runs/7/bench";
  ctx.run_id = 7;
  auto out =
      ExpandTemplate("${serve.outputs.endpoint}|${params.model}|${output_dir}|${run.id}", ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "http://10.0.0.5:30000|/models/t|/data/runs/7/bench|7");

  auto missing = ExpandTemplate("${serve.outputs.port}", ctx);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ToStd(missing.status().message()), "stage 'serve' reported no output 'port'");

  auto no_param = ExpandTemplate("${params.other}", ctx);
  ASSERT_FALSE(no_param.ok());
  EXPECT_THAT(ToStd(no_param.status().message()), HasSubstr("param 'other'"));
}

TEST(TemplateTest, UnboundReferencesFailOrStayAsWritten) {
  std::map<std::string, std::string> params = {{"p", "v"}};
  TemplateContext ctx;
  ctx.params = &params;
  EXPECT_EQ(ExpandTemplate("${output_dir}", ctx).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ExpandTemplate("${run.id}", ctx).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ExpandTemplate("${a.outputs.b}", ctx).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ctx.keep_unbound = true;
  auto kept = ExpandTemplate("${params.p} ${a.outputs.b} ${output_dir} ${run.id}", ctx);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, "v ${a.outputs.b} ${output_dir} ${run.id}");
}

// A param value is substituted as data: it stays inside its one argv element, whatever it
// holds (spaces, quotes, shell syntax, more templates).
TEST(TemplateTest, ParamValuesCannotInjectArguments) {
  Result<Workflow> wf = ParseWorkflow(R"(name: inject
params:
  prompt: hello
stages:
  s:
    run: [lh-testjob, --print, "${params.prompt}", --exit, "0"]
)",
                                      "inject.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  const std::string evil = "x --exit 3; rm -rf / $(reboot) ${run.id} \"q\" 'a b'";
  auto params = ResolveParams(*wf, {{"prompt", evil}});
  ASSERT_TRUE(params.ok()) << params.status();
  TemplateContext ctx;
  ctx.params = &*params;
  ctx.run_id = 5;
  std::vector<std::string> argv;
  for (const std::string& arg : wf->stages[0].run) {
    auto expanded = ExpandTemplate(arg, ctx);
    ASSERT_TRUE(expanded.ok()) << expanded.status();
    argv.push_back(*expanded);
  }
  ASSERT_EQ(argv.size(), 5u);
  EXPECT_EQ(argv[2], evil);  // not split, and its "${run.id}" is not expanded
  EXPECT_EQ(argv[3], "--exit");
  EXPECT_EQ(argv[4], "0");
}

TEST(TemplateTest, TemplateNames) {
  EXPECT_TRUE(IsTemplateName("target_server"));
  EXPECT_TRUE(IsTemplateName("_x-1"));
  EXPECT_FALSE(IsTemplateName(""));
  EXPECT_FALSE(IsTemplateName("1a"));
  EXPECT_FALSE(IsTemplateName("a.b"));
  EXPECT_FALSE(IsTemplateName("a b"));
}

}  // namespace
}  // namespace longhaul::workflow
