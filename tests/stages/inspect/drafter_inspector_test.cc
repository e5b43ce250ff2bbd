// lh-inspect drafter on small synthetic checkpoints in both layouts: a sound drafter passes;
// a corrupted d2t, mappings that disagree, a vocab or hash mismatch and aux layer ids under
// eagle_config are each flagged.
#include "stages/inspect/drafter_inspector.h"

#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/fs.h"
#include "core/strings.h"
#include "stages/inspect/safetensors.h"
#include "stages/refmodel/draft_vocab.h"
#include "stages/refmodel/drafter.h"
#include "stages/refmodel/tensor_file.h"
#include "tests/testing/test_util.h"

namespace longhaul::inspect {
namespace {

using nlohmann::json;
using testing::TempDir;

constexpr int kVocab = 40, kDraft = 8;
const char kHash[] = "0123456789abcdef0123456789abcdef";

std::vector<const Finding*> Findings(const Report& r, const std::string& check) {
  std::vector<const Finding*> out;
  for (const Finding& f : r.findings()) {
    if (f.check == check) out.push_back(&f);
  }
  return out;
}

DrafterOptions Opts(std::string target_config = "", std::optional<int64_t> vocab = std::nullopt,
                    std::optional<std::string> hash = std::nullopt) {
  DrafterOptions o;
  o.target_config = std::move(target_config);
  o.target_vocab_size = vocab;
  o.target_hash = std::move(hash);
  return o;
}

class DrafterInspectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    refmodel::DrafterConfig c;
    c.target_vocab_size = kVocab;
    c.target_hidden_size = 4;
    c.hidden_size = 3;
    c.target_model_hash = kHash;
    std::vector<int64_t> counts(kVocab, 0);
    for (int t = 0; t < kVocab; t += 3) counts[t] = 100 - t;
    auto vocab = refmodel::BuildDraftVocab(counts, kDraft);
    ASSERT_TRUE(vocab.ok());
    auto d = refmodel::Drafter::Create(c, *vocab, 7);
    ASSERT_TRUE(d.ok()) << d.status();
    ASSERT_TRUE(d->Save(Drafter()).ok());
    d2t_ = vocab->d2t;
    t2d_ = vocab->t2d;
    testing::WriteTextFile(dir_.Join("manifest.json"), json{{"target_vocab_size", kVocab},
                                                            {"hidden_size", 4},
                                                            {"target_model_hash", kHash},
                                                            {"aux_layer_ids", {0, 1, 2}}}
                                                           .dump());
  }
  std::string Drafter() const { return dir_.Join("drafter"); }

  Report Inspect(DrafterOptions o) {
    if (o.drafter.empty()) o.drafter = Drafter();
    Report r;
    std::ostringstream out;
    Status s = InspectDrafter(o, r, out);
    EXPECT_TRUE(s.ok()) << s;
    text_ = out.str();
    return r;
  }
  void WriteD2t(const std::vector<int64_t>& d2t) {
    ASSERT_TRUE(refmodel::WriteTensorFile(Drafter() + "/d2t.bin",
                                          {{"d2t", refmodel::Tensor::I64({d2t.size()}, d2t)}})
                    .ok());
  }
  void WriteT2d(const std::vector<uint8_t>& t2d) {
    ASSERT_TRUE(refmodel::WriteTensorFile(Drafter() + "/t2d.bin",
                                          {{"t2d", refmodel::Tensor::U8({t2d.size()}, t2d)}})
                    .ok());
  }
  json Config() { return json::parse(testing::ReadTextFile(Drafter() + "/config.json")); }
  void SetConfig(const json& j) { testing::WriteTextFile(Drafter() + "/config.json", j.dump(2)); }

  TempDir dir_;
  std::vector<int64_t> d2t_;
  std::vector<uint8_t> t2d_;
  std::string text_;
};

TEST_F(DrafterInspectorTest, SoundDrafterMatchingItsTargetPasses) {
  Report r = Inspect(Opts(dir_.Join("manifest.json")));
  EXPECT_FALSE(r.Fails(Severity::kWarn)) << r.ToJson().dump(2);
  const json s = r.ToJson()["sections"]["drafter"];
  EXPECT_EQ(s["format"], "refengine");
  EXPECT_EQ(s["draft_vocab_size"], kDraft);
  EXPECT_EQ(s["t2d_ones"], kDraft);
  EXPECT_EQ(s["aux_layer_ids_location"], "top level");
  EXPECT_NE(text_.find("aux layer ids       [0, 1, 2] (top level)"), std::string::npos) << text_;
}

TEST_F(DrafterInspectorTest, CorruptedD2tIsFlaggedWithTheEntry) {
  std::vector<int64_t> bad = d2t_;
  bad[2] = 1000;
  WriteD2t(bad);
  Report r = Inspect(Opts(dir_.Join("manifest.json")));
  auto f = Findings(r, "d2t_out_of_range");
  ASSERT_EQ(f.size(), 1u) << r.ToJson().dump(2);
  EXPECT_EQ(f[0]->severity, Severity::kError);
  EXPECT_NE(f[0]->text.find("d2t[2] = 1000"), std::string::npos) << f[0]->text;
  EXPECT_NE(f[0]->text.find("d2t.bin"), std::string::npos) << f[0]->text;
  EXPECT_EQ(r.ToJson()["sections"]["drafter"]["d2t_out_of_range"], 1);
}

TEST_F(DrafterInspectorTest, MappingsThatDisagreeAreFlagged) {
  // t2d marks one token too few and another instead: the same count, other ids.
  std::vector<uint8_t> t2d = t2d_;
  int32_t taken = static_cast<int32_t>(d2t_[1] + 1);
  t2d[taken] = 0;
  for (int t = 0; t < kVocab; ++t) {
    if (!t2d[t] && t != taken) {
      t2d[t] = 1;
      break;
    }
  }
  WriteT2d(t2d);
  Report r = Inspect(Opts());
  auto f = Findings(r, "d2t_t2d_disagree");
  ASSERT_EQ(f.size(), 1u) << r.ToJson().dump(2);
  EXPECT_NE(f[0]->text.find(StrCat("draft id 1 maps to target id ", taken)), std::string::npos)
      << f[0]->text;
}

TEST_F(DrafterInspectorTest, VocabSizeAndHashMismatchAgainstTheTarget) {
  Report r = Inspect(Opts("", 50, "ffff"));
  auto vocab = Findings(r, "target_vocab_mismatch");
  ASSERT_EQ(vocab.size(), 1u) << r.ToJson().dump(2);
  EXPECT_NE(vocab[0]->text.find("40"), std::string::npos);
  EXPECT_NE(vocab[0]->text.find("50"), std::string::npos);
  EXPECT_EQ(Findings(r, "target_hash_mismatch").size(), 1u);

  // A config whose own sizes disagree with its d2t.
  json c = Config();
  c["draft_vocab_size"] = kDraft + 2;
  SetConfig(c);
  Report own = Inspect(Opts());
  EXPECT_EQ(Findings(own, "d2t_length").size(), 1u) << own.ToJson().dump(2);
  EXPECT_EQ(Findings(own, "t2d_count").size(), 1u);
}

TEST_F(DrafterInspectorTest, AuxLayerIdsOnlyUnderEagleConfigAreFlagged) {
  json c = Config();
  c["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", c["eagle_aux_hidden_state_layer_ids"]}};
  c.erase("eagle_aux_hidden_state_layer_ids");
  SetConfig(c);
  Report r = Inspect(Opts(dir_.Join("manifest.json")));
  auto f = Findings(r, "aux_layer_ids_in_eagle_config");
  ASSERT_EQ(f.size(), 1u) << r.ToJson().dump(2);
  EXPECT_EQ(f[0]->severity, Severity::kWarn);
  EXPECT_NE(f[0]->text.find("vLLM"), std::string::npos);
  EXPECT_EQ(r.ToJson()["sections"]["drafter"]["aux_layer_ids_location"], "eagle_config only");

  c["eagle_aux_hidden_state_layer_ids"] = {0, 1, 3};
  SetConfig(c);
  Report both = Inspect(Opts(dir_.Join("manifest.json")));
  EXPECT_EQ(Findings(both, "aux_layer_ids_conflict").size(), 1u) << both.ToJson().dump(2);
  EXPECT_EQ(Findings(both, "aux_layer_mismatch").size(), 1u);
}

// --- the safetensors layout of SpecForge / EAGLE-3 exports -------------------------------

void WriteSafetensors(
    const std::string& path,
    const std::vector<std::tuple<std::string, std::string, std::vector<uint64_t>, std::string>>&
        tensors) {
  json header = json::object();
  std::string data;
  for (const auto& [name, dtype, shape, bytes] : tensors) {
    header[name] = {{"dtype", dtype},
                    {"shape", shape},
                    {"data_offsets", {data.size(), data.size() + bytes.size()}}};
    data += bytes;
  }
  std::string h = header.dump();
  uint64_t n = h.size();
  std::string file(reinterpret_cast<const char*>(&n), 8);
  testing::WriteTextFile(path, file + h + data);
}

template <typename T>
std::string Raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

TEST(SafetensorsDrafterTest, ExportedDrafterIsReadAndCheckedAgainstAnHfConfig) {
  TempDir dir;
  std::string d = dir.Join("eagle3");
  ASSERT_TRUE(MakeDirs(d).ok());
  // Draft tokens 0..3 -> target ids 1, 4, 6, 9 of a 10-token vocabulary.
  std::vector<int64_t> d2t = {1, 3, 4, 6};
  std::vector<uint8_t> t2d(10, 0);
  for (int t : {1, 4, 6, 9}) t2d[t] = 1;
  WriteSafetensors(d + "/model.safetensors",
                   {{"d2t", "I64", {4}, Raw(d2t)},
                    {"t2d", "BOOL", {10}, Raw(t2d)},
                    {"lm_head.weight", "F32", {4, 8}, std::string(4 * 8 * 4, '\0')},
                    {"fc.weight", "F32", {8, 24}, std::string(8 * 24 * 4, '\0')}});
  testing::WriteTextFile(d + "/config.json",
                         json{{"architectures", {"LlamaForCausalLMEagle3"}},
                              {"draft_vocab_size", 4},
                              {"vocab_size", 10},
                              {"hidden_size", 8},
                              {"eagle_config", {{"eagle_aux_hidden_state_layer_ids", {1, 5, 9}}}}}
                             .dump());
  testing::WriteTextFile(
      dir.Join("target.json"),
      json{{"vocab_size", 10}, {"hidden_size", 8}, {"num_hidden_layers", 8}}.dump());

  auto st = SafetensorsFile::Open(d + "/model.safetensors");
  ASSERT_TRUE(st.ok()) << st.status();
  auto t = st->ReadIntegers("t2d");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[9], 1);

  Report r;
  std::ostringstream out;
  DrafterOptions o = Opts(dir.Join("target.json"));
  o.drafter = d;
  ASSERT_TRUE(InspectDrafter(o, r, out).ok());
  const json s = r.ToJson()["sections"]["drafter"];
  EXPECT_EQ(s["format"], "safetensors");
  EXPECT_EQ(s["t2d_ones"], 4);
  EXPECT_EQ(s["d2t_out_of_range"], 0);
  EXPECT_EQ(Findings(r, "aux_layer_ids_in_eagle_config").size(), 1u) << r.ToJson().dump(2);
  auto range = Findings(r, "aux_layer_out_of_range");
  ASSERT_EQ(range.size(), 1u);
  EXPECT_NE(range[0]->text.find("aux layer id 9"), std::string::npos) << range[0]->text;
  EXPECT_TRUE(Findings(r, "d2t_t2d_disagree").empty());
  EXPECT_TRUE(Findings(r, "fc_width").empty());

  // A truncated file is a finding that names it, not a crash.
  std::string whole = testing::ReadTextFile(d + "/model.safetensors");
  testing::WriteTextFile(d + "/model.safetensors", whole.substr(0, whole.size() - 100));
  Report cut;
  o = Opts();
  o.drafter = d;
  ASSERT_TRUE(InspectDrafter(o, cut, out).ok());
  auto unreadable = Findings(cut, "unreadable_file");
  ASSERT_EQ(unreadable.size(), 1u) << cut.ToJson().dump(2);
  EXPECT_NE(unreadable[0]->text.find("model.safetensors"), std::string::npos);
}

}  // namespace
}  // namespace longhaul::inspect
