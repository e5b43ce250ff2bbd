// What `compare` lists first, and `show`'s environment table.
#include "cli/provenance_view.h"

#include <gtest/gtest.h>

#include <sstream>

namespace longhaul::cli {
namespace {

v1::AttemptEnvironment ProvEnv(const std::string& exe, const std::string& sha,
                               const std::string& engine, const std::string& agent = "0.1.0") {
  v1::AttemptEnvironment e;
  e.set_executable(exe);
  e.set_executable_path("/bin/" + exe);
  e.set_executable_sha256(sha);
  e.set_agent_version(agent);
  if (!engine.empty()) {
    e.set_engine_profile("refengine");
    e.set_engine_version(engine);
  }
  return e;
}

v1::Run ProvRun(const std::string& commit, bool dirty, const std::string& engine,
                const std::string& gen_sha, const std::string& agent) {
  v1::Run r;
  v1::SourceState* s = r.mutable_source();
  s->set_kind("git");
  s->set_commit(commit);
  s->set_branch("main");
  s->set_dirty(dirty);
  if (dirty) s->set_diff_sha256(std::string(64, 'd'));
  v1::Stage* gen = r.add_stages();
  gen->set_name("gen");
  v1::Attempt* g1 = gen->add_attempts();
  g1->set_number(1);
  *g1->mutable_environment() = ProvEnv("lh-datagen", gen_sha, "", agent);
  v1::Stage* serve = r.add_stages();
  serve->set_name("serve");
  serve->add_attempts()->set_number(1);  // a first attempt whose agent recorded nothing
  v1::Attempt* s2 = serve->add_attempts();
  s2->set_number(2);
  *s2->mutable_environment() = ProvEnv("lh-serve", "s1", engine, agent);
  return r;
}

TEST(ProvenanceViewTest, ListsSourceThenStagesThenAgentsAndOnlyWhatDiffers) {
  v1::Run a = ProvRun(std::string(40, 'a'), false, "0.8.4", "g1", "0.1.0");
  v1::Run b = ProvRun(std::string(40, 'b'), true, "0.9.0", "g2", "0.2.0");
  std::vector<ProvenanceDifference> d = ProvenanceDifferences(a, b);
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].what, "source commit");
  EXPECT_EQ(d[0].a, std::string(12, 'a'));
  EXPECT_EQ(d[1].what, "uncommitted changes");
  EXPECT_EQ(d[1].b, "dirty, diff " + std::string(12, 'd'));
  EXPECT_EQ(d[2].what, "executable lh-datagen (gen)");
  EXPECT_EQ(d[3].what, "engine version (serve)");
  EXPECT_EQ(d[3].a, "refengine 0.8.4");
  EXPECT_EQ(d[3].b, "refengine 0.9.0");
  EXPECT_EQ(d[4].what, "agent version");
  EXPECT_TRUE(ProvenanceDifferences(a, a).empty());
}

TEST(ProvenanceViewTest, AStageReusedInOneRunIsNotCompared) {
  v1::Run a = ProvRun("c", false, "0.8.4", "g1", "0.1.0");
  v1::Run b = ProvRun("c", false, "0.8.4", "g2", "0.1.0");
  b.mutable_stages(0)->clear_attempts();  // gen reused in b: it ran in a
  EXPECT_TRUE(ProvenanceDifferences(a, b).empty());
}

TEST(ProvenanceViewTest, NotRecordedSourcesAreSaidOnce) {
  v1::Run a = ProvRun("c", false, "0.8.4", "g1", "0.1.0");
  v1::Run b = a;
  b.clear_source();
  std::vector<ProvenanceDifference> d = ProvenanceDifferences(a, b);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].what, "source");
  EXPECT_EQ(d[0].b, "not recorded");
}

TEST(ProvenanceViewTest, TheEnvironmentTableShowsEachStagesLastRecordedAttempt) {
  v1::Run a = ProvRun("c", false, "0.8.4", "g1", "0.1.0");
  a.mutable_stages(1)->mutable_attempts(1)->mutable_environment()->add_notes("a note");
  std::ostringstream out;
  RenderEnvironmentTable(out, a);
  std::string text = out.str();
  EXPECT_NE(text.find("environment (each stage's last attempt):"), std::string::npos) << text;
  EXPECT_NE(text.find("serve  2"), std::string::npos) << text;
  EXPECT_NE(text.find("refengine 0.8.4"), std::string::npos) << text;
  EXPECT_NE(text.find("note: serve: a note"), std::string::npos) << text;
  std::ostringstream none;
  RenderEnvironmentTable(none, v1::Run());
  EXPECT_EQ(none.str(), "");
}

}  // namespace
}  // namespace longhaul::cli
