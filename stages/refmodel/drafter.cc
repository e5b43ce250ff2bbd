#include "stages/refmodel/drafter.h"

#include <cmath>
#include <limits>

#include "core/fs.h"
#include "core/strings.h"
#include "stages/refmodel/sampling.h"
#include "stages/refmodel/tensor_file.h"

namespace longhaul::refmodel {
namespace {

constexpr char kArchitecture[] = "LonghaulEagle3Drafter";
const std::vector<int> kTargetLayers = {0, 1, 2};

void XavierFill(Rng& rng, int fan_out, int fan_in, std::vector<float>* w) {
  double limit = std::sqrt(6.0 / (fan_in + fan_out));
  w->resize(static_cast<size_t>(fan_out) * fan_in);
  for (float& v : *w) v = static_cast<float>((rng.Uniform() * 2 - 1) * limit);
}

std::string LayersText(const std::vector<int>& ids) {
  std::vector<std::string> parts;
  for (int i : ids) parts.push_back(std::to_string(i));
  return StrCat("[", StrJoin(parts, ", "), "]");
}

Status CheckShapes(const DrafterConfig& c, int draft_vocab) {
  if (c.target_vocab_size < 1 || c.target_hidden_size < 1 || c.hidden_size < 1 || draft_vocab < 1) {
    return absl::InvalidArgumentError(StrCat("drafter sizes must be positive (target_vocab_size ",
                                             c.target_vocab_size, ", target_hidden_size ",
                                             c.target_hidden_size, ", hidden_size ", c.hidden_size,
                                             ", draft_vocab_size ", draft_vocab, ")"));
  }
  if (draft_vocab > c.target_vocab_size) {
    return absl::InvalidArgumentError(StrCat("draft_vocab_size ", draft_vocab,
                                             " exceeds target_vocab_size ", c.target_vocab_size));
  }
  return OkStatus();
}

Result<int> GetInt(const nlohmann::json& j, const std::string& file, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 0 ||
      it->get<int64_t>() > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(
        StrCat(file, ": '", key, "' must be an integer from 0 to ",
               std::numeric_limits<int>::max()));
  }
  return it->get<int>();
}

}  // namespace

float Dot(const float* a, const float* b, int n) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

void MatVec(const float* w, const float* b, const float* x, int rows, int cols, float* y) {
  for (int r = 0; r < rows; ++r) y[r] = b[r] + Dot(w + static_cast<size_t>(r) * cols, x, cols);
}

Result<Drafter> Drafter::Create(const DrafterConfig& config, DraftVocab vocab, uint64_t seed) {
  RETURN_IF_ERROR(CheckShapes(config, vocab.size()));
  if (vocab.t2d.size() != static_cast<size_t>(config.target_vocab_size)) {
    return absl::InvalidArgumentError(StrCat(
        "t2d covers ", vocab.t2d.size(), " target tokens, expected ", config.target_vocab_size));
  }
  Drafter d;
  d.config_ = config;
  d.vocab_ = std::move(vocab);
  const int D = config.hidden_size, H = config.target_hidden_size, N = d.vocab_.size();
  Rng rng(seed);
  XavierFill(rng, D, 3 * H, &d.w_.fc_w);
  d.w_.fc_b.assign(D, 0.0f);
  XavierFill(rng, D, D + H, &d.w_.in_w);
  d.w_.in_b.assign(D, 0.0f);
  XavierFill(rng, N, D, &d.w_.head_w);
  d.w_.head_b.assign(N, 0.0f);
  return d;
}

Status Drafter::Save(const std::string& dir) const {
  RETURN_IF_ERROR(MakeDirs(dir));
  const uint64_t D = config_.hidden_size, H = config_.target_hidden_size, N = vocab_.size();
  TensorMap weights;
  weights["fc.weight"] = Tensor::F32({D, 3 * H}, w_.fc_w);
  weights["fc.bias"] = Tensor::F32({D}, w_.fc_b);
  weights["layer.weight"] = Tensor::F32({D, D + H}, w_.in_w);
  weights["layer.bias"] = Tensor::F32({D}, w_.in_b);
  weights["lm_head.weight"] = Tensor::F32({N, D}, w_.head_w);
  weights["lm_head.bias"] = Tensor::F32({N}, w_.head_b);
  RETURN_IF_ERROR(WriteTensorFile(dir + "/weights.bin", weights));
  RETURN_IF_ERROR(WriteTensorFile(dir + "/d2t.bin", {{"d2t", Tensor::I64({N}, vocab_.d2t)}}));
  RETURN_IF_ERROR(
      WriteTensorFile(dir + "/t2d.bin", {{"t2d", Tensor::U8({vocab_.t2d.size()}, vocab_.t2d)}}));
  nlohmann::json config = {
      {"architecture", kArchitecture},
      {"format_version", kFormatVersion},
      {"draft_vocab_size", N},
      {"hidden_size", D},
      {"target_hidden_size", H},
      {"target_vocab_size", config_.target_vocab_size},
      {"eagle_aux_hidden_state_layer_ids", config_.aux_layer_ids},
      {"target_model_hash", config_.target_model_hash},
      {"training", config_.training},
  };
  return WriteFileAtomic(dir + "/config.json", config.dump(2) + "\n");
}

Result<Drafter> Drafter::Load(const std::string& dir) {
  const std::string config_path = dir + "/config.json";
  auto text = ReadFile(config_path);
  if (!text.ok()) return Annotate(text.status(), "loading the drafter");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(StrCat(config_path, ": not JSON: ", e.what()));
  }
  if (!j.is_object()) return absl::InvalidArgumentError(StrCat(config_path, ": not an object"));
  if (j.value("architecture", "") != kArchitecture) {
    return absl::InvalidArgumentError(StrCat(config_path, ": architecture '",
                                             j.value("architecture", ""), "', expected '",
                                             kArchitecture, "'"));
  }
  ASSIGN_OR_RETURN(int version, GetInt(j, config_path, "format_version"));
  if (version != kFormatVersion) {
    return absl::InvalidArgumentError(
        StrCat(config_path, ": format_version ", version, ", expected ", kFormatVersion));
  }
  DrafterConfig c;
  ASSIGN_OR_RETURN(int n, GetInt(j, config_path, "draft_vocab_size"));
  ASSIGN_OR_RETURN(c.hidden_size, GetInt(j, config_path, "hidden_size"));
  ASSIGN_OR_RETURN(c.target_hidden_size, GetInt(j, config_path, "target_hidden_size"));
  ASSIGN_OR_RETURN(c.target_vocab_size, GetInt(j, config_path, "target_vocab_size"));
  try {
    c.aux_layer_ids = j.at("eagle_aux_hidden_state_layer_ids").get<std::vector<int>>();
    c.target_model_hash = j.at("target_model_hash").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        StrCat(config_path,
               ": needs 'eagle_aux_hidden_state_layer_ids' (list of ints) and 'target_model_hash' "
               "(string): ",
               e.what()));
  }
  if (j.contains("training")) c.training = j["training"];
  RETURN_IF_ERROR(Annotate(CheckShapes(c, n), config_path));

  const uint64_t D = c.hidden_size, H = c.target_hidden_size, N = n;
  const std::string wpath = dir + "/weights.bin";
  ASSIGN_OR_RETURN(TensorMap weights, ReadTensorFile(wpath));
  Drafter d;
  struct Want {
    const char* name;
    std::vector<uint64_t> shape;
    std::vector<float>* dst;
  };
  for (const Want& want : std::vector<Want>{{"fc.weight", {D, 3 * H}, &d.w_.fc_w},
                                            {"fc.bias", {D}, &d.w_.fc_b},
                                            {"layer.weight", {D, D + H}, &d.w_.in_w},
                                            {"layer.bias", {D}, &d.w_.in_b},
                                            {"lm_head.weight", {N, D}, &d.w_.head_w},
                                            {"lm_head.bias", {N}, &d.w_.head_b}}) {
    ASSIGN_OR_RETURN(const Tensor* t,
                     GetTensor(weights, wpath, want.name, DType::kFloat32, want.shape));
    *want.dst = t->f32;
  }
  const std::string d2t_path = dir + "/d2t.bin", t2d_path = dir + "/t2d.bin";
  ASSIGN_OR_RETURN(TensorMap d2t_file, ReadTensorFile(d2t_path));
  ASSIGN_OR_RETURN(const Tensor* d2t, GetTensor(d2t_file, d2t_path, "d2t", DType::kInt64, {N}));
  ASSIGN_OR_RETURN(TensorMap t2d_file, ReadTensorFile(t2d_path));
  ASSIGN_OR_RETURN(const Tensor* t2d, GetTensor(t2d_file, t2d_path, "t2d", DType::kUInt8,
                                                {static_cast<uint64_t>(c.target_vocab_size)}));
  auto vocab = DraftVocabFromMappings(d2t->i64, t2d->u8);
  if (!vocab.ok()) return Annotate(vocab.status(), dir);
  d.config_ = std::move(c);
  d.vocab_ = std::move(*vocab);
  return d;
}

Status Drafter::CheckTarget(const TargetModel& target) const {
  if (config_.target_model_hash != target.model_hash()) {
    return absl::FailedPreconditionError(
        StrCat("drafter was trained for target model ", config_.target_model_hash.substr(0, 16),
               "..., this target is ", target.model_hash().substr(0, 16),
               "... (another corpus or target config)"));
  }
  if (config_.target_vocab_size != target.vocab_size()) {
    return absl::FailedPreconditionError(StrCat("drafter target_vocab_size ",
                                                config_.target_vocab_size, " != target vocab size ",
                                                target.vocab_size()));
  }
  if (config_.target_hidden_size != target.hidden_size()) {
    return absl::FailedPreconditionError(StrCat("drafter target_hidden_size ",
                                                config_.target_hidden_size,
                                                " != target hidden size ", target.hidden_size()));
  }
  if (config_.aux_layer_ids != kTargetLayers) {
    return absl::FailedPreconditionError(
        StrCat("drafter eagle_aux_hidden_state_layer_ids ", LayersText(config_.aux_layer_ids),
               " do not match the target's aux layers ", LayersText(kTargetLayers)));
  }
  return OkStatus();
}

void Drafter::Fuse(const float* aux, float* g) const {
  MatVec(w_.fc_w.data(), w_.fc_b.data(), aux, config_.hidden_size, 3 * config_.target_hidden_size,
         g);
}

void Drafter::Step(const float* h, const float* e, float* a, float* logits) const {
  const int D = config_.hidden_size, H = config_.target_hidden_size;
  for (int r = 0; r < D; ++r) {
    const float* row = w_.in_w.data() + static_cast<size_t>(r) * (D + H);
    a[r] = std::tanh(w_.in_b[r] + Dot(row, h, D) + Dot(row + D, e, H));
  }
  MatVec(w_.head_w.data(), w_.head_b.data(), a, vocab_.size(), D, logits);
}

}  // namespace longhaul::refmodel
