#include "daemon/workflow/cache_key.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"

namespace longhaul::workflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kPivot[] = R"(name: pivot
params:
  model: /models/target
  spec_engine: vllm
  lr: "3e-4"
stages:
  datagen:
    run: [lh-datagen, --model, "${params.model}", --out, "${output_dir}"]
  finetune:
    needs: [datagen]
    run: [lh-finetune, --data, "${datagen.outputs.samples}", --lr, "${params.lr}"]
    resources: {gpus: 1}
  serve:
    kind: service
    needs: [finetune]
    run: [lh-serve, --profile, "${params.spec_engine}", --drafter, "${finetune.outputs.ckpt}"]
  bench:
    needs: [serve]
    run: [lh-bench, --endpoint, "${serve.outputs.endpoint}"]
)";

class CacheKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Workflow> wf = ParseWorkflow(kPivot, "pivot.yaml");
    ASSERT_TRUE(wf.ok()) << wf.status();
    wf_ = *wf;
  }
  std::map<std::string, std::string> Params(const std::map<std::string, std::string>& set = {}) {
    auto p = ResolveParams(wf_, set);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : std::map<std::string, std::string>{};
  }
  const StageSpec& Stage(const std::string& name) { return *wf_.FindStage(name); }

  Workflow wf_;
};

TEST_F(CacheKeyTest, RecordsOnlyTheParamsTheStageUses) {
  StageFingerprint fp = FingerprintStage(Stage("serve"), Params(), {{"finetune", "k1"}});
  EXPECT_EQ(fp.params, (std::map<std::string, std::string>{{"spec_engine", "vllm"}}));
  EXPECT_EQ(fp.upstream, (std::map<std::string, std::string>{{"finetune", "k1"}}));
  EXPECT_EQ(fp.key.size(), 64u);
  EXPECT_EQ(fp.definition_hash.size(), 64u);
}

TEST_F(CacheKeyTest, IsDeterministic) {
  StageFingerprint a = FingerprintStage(Stage("finetune"), Params(), {{"datagen", "k"}});
  StageFingerprint b = FingerprintStage(Stage("finetune"), Params(), {{"datagen", "k"}});
  EXPECT_EQ(a, b);
  EXPECT_TRUE(ExplainDifference(a, b).empty());
}

TEST_F(CacheKeyTest, ChangesWithAUsedParamNotWithAnUnusedOne) {
  StageFingerprint before = FingerprintStage(Stage("serve"), Params(), {{"finetune", "k1"}});
  StageFingerprint unused = FingerprintStage(
      Stage("serve"), Params({{"model", "/models/other"}, {"lr", "1e-3"}}), {{"finetune", "k1"}});
  EXPECT_EQ(before.key, unused.key);

  StageFingerprint now =
      FingerprintStage(Stage("serve"), Params({{"spec_engine", "sglang"}}), {{"finetune", "k1"}});
  EXPECT_NE(before.key, now.key);
  EXPECT_EQ(before.definition_hash, now.definition_hash);
  EXPECT_THAT(ExplainDifference(before, now),
              ElementsAre("param spec_engine changed (vllm -> sglang)"));
}

TEST_F(CacheKeyTest, ChangesWithAnUpstreamKey) {
  StageFingerprint before = FingerprintStage(Stage("serve"), Params(), {{"finetune", "k1"}});
  StageFingerprint now = FingerprintStage(Stage("serve"), Params(), {{"finetune", "k2"}});
  EXPECT_NE(before.key, now.key);
  EXPECT_THAT(ExplainDifference(before, now), ElementsAre("upstream 'finetune' changed"));
}

TEST_F(CacheKeyTest, IgnoresRuntimeBindingsAndResources) {
  // Same argv and env with other resources: same key. Output templates are hashed as
  // written, so the endpoint a run reports never enters the key.
  StageSpec other = Stage("finetune");
  other.resources.gpus = 8;
  other.resources.memory_bytes = 1LL << 40;
  other.retry.limit = 7;
  StageFingerprint a = FingerprintStage(Stage("finetune"), Params(), {{"datagen", "k"}});
  StageFingerprint b = FingerprintStage(other, Params(), {{"datagen", "k"}});
  EXPECT_EQ(a.key, b.key);
}

TEST_F(CacheKeyTest, DefinitionChangesAreNamed) {
  StageFingerprint before = FingerprintStage(Stage("datagen"), Params(), {});
  for (auto mutate : std::vector<std::function<void(StageSpec&)>>{
           [](StageSpec& s) { s.run.push_back("--verbose"); },
           [](StageSpec& s) { s.env["SEED"] = "1"; },
           [](StageSpec& s) { s.cache_version = "2"; },
           [](StageSpec& s) { s.kind = StageKind::kService; },
       }) {
    StageSpec changed = Stage("datagen");
    mutate(changed);
    StageFingerprint now = FingerprintStage(changed, Params(), {});
    EXPECT_NE(before.key, now.key);
    EXPECT_THAT(ExplainDifference(before, now), ElementsAre("definition changed"));
  }
  // Argument boundaries count: ["a b"] and ["a", "b"] differ.
  StageSpec one = Stage("datagen"), two = Stage("datagen");
  one.run = {"a b"};
  two.run = {"a", "b"};
  EXPECT_NE(FingerprintStage(one, Params(), {}).key, FingerprintStage(two, Params(), {}).key);
}

TEST_F(CacheKeyTest, ExplainsParamsAndUpstreamsComingAndGoing) {
  StageFingerprint before = FingerprintStage(Stage("finetune"), Params(), {{"datagen", "k"}});
  StageSpec changed = Stage("finetune");
  changed.run = {"lh-finetune", "--model", "${params.model}"};
  changed.needs = {"other"};
  StageFingerprint now = FingerprintStage(changed, Params(), {{"other", "k9"}});
  EXPECT_THAT(
      ExplainDifference(before, now),
      ElementsAre("definition changed", "now uses param model (/models/target)",
                  "no longer uses param lr", "now needs 'other'", "no longer needs 'datagen'"));
}

TEST_F(CacheKeyTest, JsonRoundTrip) {
  StageFingerprint fp = FingerprintStage(Stage("serve"), Params(), {{"finetune", "k1"}});
  std::string text = FingerprintToJson(fp).dump();
  Result<StageFingerprint> back = ParseFingerprintJson(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, fp);
  EXPECT_THAT(text, HasSubstr("\"spec_engine\":\"vllm\""));
}

// What a stage row stores is written without a JSON tree; it must be the same bytes, or a
// stored fingerprint would read back differently from a new one.
TEST_F(CacheKeyTest, JsonTextIsTheDumpByteForByte) {
  for (const StageSpec& spec : wf_.stages) {
    StageFingerprint fp = FingerprintStage(spec, Params(), {{"datagen", "k0"}, {"serve", "k2"}});
    EXPECT_EQ(FingerprintJsonText(fp), FingerprintToJson(fp).dump()) << spec.name;
  }
  StageSpec odd;
  odd.name = "odd";
  odd.kind = StageKind::kService;
  odd.run = {"sh", "-c", "echo \"a\\b\"\n\tx\x01\x1f\x7f caf\xc3\xa9 ${params.lr}", ""};
  odd.env = {{"Z", "${params.model}"}, {"A\"B", "line\r\nnext\b\f"}, {"EMPTY", ""}};
  odd.cache_version = "v\\2";
  odd.needs = {"x\"y", "a"};
  StageFingerprint fp = FingerprintStage(odd, Params(), {{"a", "k\n1"}});
  EXPECT_EQ(FingerprintJsonText(fp), FingerprintToJson(fp).dump());
  Result<StageFingerprint> back = ParseFingerprintJson(FingerprintJsonText(fp));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, fp);
  fp.definition.reset();  // as fingerprints stored before the definition was recorded
  EXPECT_EQ(FingerprintJsonText(fp), FingerprintToJson(fp).dump());
}

TEST_F(CacheKeyTest, JsonShowsTheDefinitionAsWritten) {
  StageFingerprint fp = FingerprintStage(Stage("serve"), Params(), {{"finetune", "k1"}});
  nlohmann::json json = FingerprintToJson(fp);
  EXPECT_EQ(json["definition"]["kind"], "service");
  EXPECT_EQ(json["definition"]["run"],
            nlohmann::json({"lh-serve", "--profile", "${params.spec_engine}", "--drafter",
                            "${finetune.outputs.ckpt}"}));
  EXPECT_EQ(json["definition"]["cache_version"], "");
  EXPECT_EQ(json["key"], fp.key);

  // Fingerprints stored before the definition was recorded still read, without it.
  nlohmann::json old = json;
  old.erase("definition");
  Result<StageFingerprint> back = FingerprintFromJson(old);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->definition.has_value());
  EXPECT_EQ(back->key, fp.key);

  // A definition that does not hash to definition_hash is not what made the key.
  nlohmann::json tampered = json;
  tampered["definition"]["run"][2] = "sglang";
  Result<StageFingerprint> bad = FingerprintFromJson(tampered);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(ToStd(bad.status().message()), HasSubstr("definition_hash"));
}

TEST_F(CacheKeyTest, JsonRejectsBadInput) {
  EXPECT_EQ(ParseFingerprintJson("{not json").status().code(), absl::StatusCode::kInvalidArgument);
  auto missing = ParseFingerprintJson(R"({"definition_hash": "x", "params": {}})");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(ToStd(missing.status().message()), HasSubstr("'upstream'"));
  auto wrong_type = ParseFingerprintJson(
      R"({"definition_hash": "x", "params": {"a": 1}, "upstream": {}, "key": "k"})");
  EXPECT_THAT(ToStd(wrong_type.status().message()), HasSubstr("params.a is not a string"));

  StageFingerprint fp = FingerprintStage(Stage("serve"), Params(), {{"finetune", "k1"}});
  nlohmann::json tampered = FingerprintToJson(fp);
  tampered["params"]["spec_engine"] = "sglang";
  EXPECT_EQ(FingerprintFromJson(tampered).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace longhaul::workflow

namespace longhaul::workflow {
namespace {

// A stage that reads a tag: its key sees the resolved value, not the tag's name or source;
// a stage that reads none keeps the key it had before tags existed.
TEST(CacheKeyTagsTest, KeyFollowsTheResolvedValueAndThePlanSaysTheTagMoved) {
  Result<Workflow> wf = ParseWorkflow(R"(name: t
stages:
  bench: {run: [bench, "${tags.best-drafter.outputs.drafter}", "${tags.best-drafter.run}"]}
  other: {run: [other]}
)",
                                      "t.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  ASSERT_EQ(wf->tag_uses.size(), 2u);
  EXPECT_EQ(wf->tag_uses[0].key, "best-drafter.outputs.drafter");
  EXPECT_EQ(wf->tag_uses[0].where, "run[1] in stage 'bench'");
  EXPECT_EQ(wf->tag_uses[1].key, "best-drafter.run");
  EXPECT_EQ(wf->tag_uses[1].output, "");
  const StageSpec& bench = *wf->FindStage("bench");
  const StageSpec& other = *wf->FindStage("other");

  TagBindings at41{{{"best-drafter.outputs.drafter", "/r41/d"}, {"best-drafter.run", "41"}},
                   {{"best-drafter", "run 41 train"}}};
  TagBindings at45{{{"best-drafter.outputs.drafter", "/r45/d"}, {"best-drafter.run", "45"}},
                   {{"best-drafter", "run 45 train"}}};
  StageFingerprint before = FingerprintStage(bench, {}, {}, &at41);
  StageFingerprint after = FingerprintStage(bench, {}, {}, &at45);
  EXPECT_EQ(before.tags.at("best-drafter.outputs.drafter"), "/r41/d");
  EXPECT_NE(before.key, after.key);
  EXPECT_EQ(FingerprintStage(bench, {}, {}, &at41).key, before.key);
  EXPECT_THAT(ExplainDifference(before, after),
              ElementsAre("tag best-drafter moved (run 41 train -> run 45 train)"));
  // The same place with a new value (the stage was retried and recorded another).
  TagBindings rewritten = at41;
  rewritten.values["best-drafter.outputs.drafter"] = "/r41/d2";
  EXPECT_THAT(ExplainDifference(before, FingerprintStage(bench, {}, {}, &rewritten)),
              ElementsAre("tag best-drafter outputs.drafter changed (/r41/d -> /r41/d2)"));
  EXPECT_EQ(FingerprintStage(other, {}, {}, &at41).key, FingerprintStage(other, {}, {}).key);
  EXPECT_TRUE(FingerprintStage(other, {}, {}, &at41).tags.empty());

  // Stored and read back, byte for byte as the dump, with the key checked.
  EXPECT_EQ(FingerprintJsonText(before), FingerprintToJson(before).dump());
  Result<StageFingerprint> back = ParseFingerprintJson(FingerprintJsonText(before));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, before);
  std::string forged = FingerprintJsonText(before);
  forged.replace(forged.find("/r41/d"), 6, "/r99/d");
  EXPECT_EQ(ParseFingerprintJson(forged).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace longhaul::workflow
