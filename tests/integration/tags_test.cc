// Tags with real daemons (docs/workflow-format.md, "Tags"): `longhaul tag` names a finished
// stage's result; a later workflow's ${tags.*} reads it; `show`, `tags`, `lineage`, the HTTP
// API and the audit trail say where things came from; a moved tag re-runs the reader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

using ::testing::HasSubstr;

class TagsIntegrationTest : public ClusterTest {
 protected:
  int64_t CliSubmit(const std::string& yaml, const std::string& file) {
    CommandResult r = cluster().Cli({"submit", cluster().WriteFile(file, yaml)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? std::stoll(r.out) : 0;
  }
  // A run whose stage `train` reports output drafter=VALUE; waits for it to succeed.
  int64_t Train(const std::string& value) {
    std::string yaml =
        StrCat("name: trainer\nparams: {v: x}\nstages:\n",
               StageYaml("train",
                         YamlList({BinPath("lh-testjob"), "--output", StrCat("drafter=", value),
                                   "--print", "${params.v}"}),
                         {}));
    int64_t id = CliSubmit(yaml, "trainer-" + value + ".yaml");
    Result<v1::Run> done = cluster().WaitForRunEnd(id, 60'000);
    EXPECT_TRUE(done.ok() && done->status() == v1::RUN_SUCCEEDED);
    return id;
  }
};

constexpr char kReader[] = R"(name: reader
stages:
  bench:
    run: [LH_TESTJOB, --output, "seen=${tags.best-drafter.outputs.drafter}", --output, "run=${tags.best-drafter.run}"]
)";

TEST_F(TagsIntegrationTest, AReaderGetsTheTaggedValueAndRunsAgainWhenTheTagMoves) {
  ClusterOptions o;
  o.agents = 1;
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  std::string reader = kReader;
  reader.replace(reader.find("LH_TESTJOB"), 10, BinPath("lh-testjob"));

  // No tag yet: refused with the template's position and the tag's name.
  std::string reader_file = cluster().WriteFile("reader.yaml", reader);
  CommandResult refused = cluster().Cli({"submit", reader_file});
  EXPECT_NE(refused.exit_code, 0);
  // The column is that of the "${", after lh-testjob's path on line 4.
  std::string line4 = reader.substr(reader.find("    run:"));
  size_t column = line4.find("${tags") + 1;
  EXPECT_THAT(refused.err,
              HasSubstr(StrCat("reader.yaml:4:", column, ": run[2] in stage 'bench': ",
                               "${tags.best-drafter.outputs.drafter}: no tag 'best-drafter'")));

  int64_t first = Train("/d/first");
  CommandResult tag = cluster().Cli({"tag", std::to_string(first), "train", "best-drafter"});
  ASSERT_EQ(tag.exit_code, 0) << tag.err;
  EXPECT_EQ(tag.out, StrCat("tag best-drafter -> run ", first, " train\n"));

  CommandResult submitted = cluster().Cli({"submit", reader_file});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  EXPECT_THAT(submitted.err, HasSubstr(StrCat("tags.best-drafter -> run ", first, " train")));
  int64_t read1 = std::stoll(submitted.out);
  Result<v1::Run> r1 = cluster().WaitForRunEnd(read1, 60'000);
  ASSERT_TRUE(r1.ok()) << r1.status().message();
  ASSERT_EQ(r1->status(), v1::RUN_SUCCEEDED);
  EXPECT_EQ(FindStage(*r1, "bench")->outputs().at("seen"), "/d/first");
  EXPECT_EQ(FindStage(*r1, "bench")->outputs().at("run"), std::to_string(first));

  CommandResult show = cluster().Cli({"show", std::to_string(read1)});
  EXPECT_THAT(show.out, HasSubstr(StrCat("from tag:  tags.best-drafter -> run ", first, " train")));
  CommandResult shown_tagged = cluster().Cli({"show", std::to_string(first)});
  EXPECT_THAT(shown_tagged.out, HasSubstr("tags:      best-drafter (train)"));
  CommandResult lineage = cluster().Cli({"lineage", std::to_string(read1), "bench"});
  EXPECT_THAT(lineage.out, HasSubstr(StrCat("tags.best-drafter  run ", first, " stage train")));
  CommandResult used = cluster().Cli({"lineage", std::to_string(first), "train"});
  EXPECT_THAT(used.out, HasSubstr("through tag best-drafter"));

  // Moving needs --force; then the reader runs again, and the plan says why.
  int64_t second = Train("/d/second");
  CommandResult plain = cluster().Cli({"tag", std::to_string(second), "train", "best-drafter"});
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_THAT(plain.err, HasSubstr(StrCat("tag 'best-drafter' is on run ", first,
                                          " train (set by local); pass --force to move it")));
  CommandResult moved =
      cluster().Cli({"tag", std::to_string(second), "train", "best-drafter", "--force"});
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  EXPECT_THAT(moved.out, HasSubstr(StrCat("(moved from run ", first, " train)")));
  CommandResult plan = cluster().Cli({"submit", reader_file, "--dry-run"});
  EXPECT_THAT(plan.out, HasSubstr(StrCat("tag best-drafter moved (run ", first, " train -> run ",
                                         second, " train)")));
  int64_t read2 = CliSubmit(reader, "reader.yaml");
  Result<v1::Run> r2 = cluster().WaitForRunEnd(read2, 60'000);
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ(FindStage(*r2, "bench")->status(), v1::STAGE_SUCCEEDED);  // ran, not reused
  EXPECT_EQ(FindStage(*r2, "bench")->outputs().at("seen"), "/d/second");

  CommandResult list = cluster().Cli({"tags"});
  EXPECT_THAT(list.out, HasSubstr("NAME"));
  EXPECT_THAT(list.out, HasSubstr("\nbest-drafter  "));
  EXPECT_THAT(list.out, HasSubstr(StrCat(" ", second, "  train  local")));
  CommandResult runs = cluster().Cli({"runs", "--tag", "best-drafter"});
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_THAT(runs.out, HasSubstr(StrCat(second, "  trainer")));
  EXPECT_THAT(runs.out, ::testing::Not(HasSubstr(StrCat(first, "  trainer"))));

  // The HTTP API: list, set (another name), remove.
  auto got = HttpGet(cluster().http_address(), StrCat("/api/v1/tags?run=", second));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->status, 200) << got->body;
  EXPECT_THAT(got->body, HasSubstr("\"name\":\"best-drafter\""));
  auto listed = HttpGet(cluster().http_address(), StrCat("/api/v1/runs?id=", second));
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  EXPECT_THAT(listed->body, HasSubstr("\"tags\":[{\"name\":\"best-drafter\""));
  nlohmann::json body = {{"name", "baseline"}, {"run_id", first}, {"stage", "train"}};
  auto posted = HttpRequest(cluster().http_address(), "POST", "/api/v1/tags", body.dump());
  ASSERT_TRUE(posted.ok()) << posted.status().message();
  EXPECT_EQ(posted->status, 200) << posted->body;
  auto deleted = HttpRequest(cluster().http_address(), "DELETE", "/api/v1/tags/baseline");
  ASSERT_TRUE(deleted.ok()) << deleted.status().message();
  EXPECT_EQ(deleted->status, 200) << deleted->body;
  EXPECT_THAT(deleted->body, HasSubstr(StrCat("run ", first, " train")));
  auto gone = HttpRequest(cluster().http_address(), "DELETE", "/api/v1/tags/baseline");
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->status, 404) << gone->body;

  // The audit trail keeps where the tag was before it moved.
  Result<std::string> audit = cluster().Query(
      "SELECT action || ' ' || target || ' ' || detail FROM audit WHERE action LIKE '%Tag' "
      "ORDER BY id");
  ASSERT_TRUE(audit.ok()) << audit.status().message();
  EXPECT_THAT(*audit, HasSubstr(StrCat("SetTag tag best-drafter run ", second,
                                       " train (moved from run ", first, " train)")));
  EXPECT_THAT(*audit, HasSubstr(StrCat("RemoveTag tag baseline was on run ", first, " train")));
}

}  // namespace
}  // namespace longhaul::testing
