#include "stages/refmodel/target_model.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <numeric>

#include "core/fs.h"
#include "core/hash.h"
#include "core/strings.h"
#include "stages/refmodel/sampling.h"

namespace longhaul::refmodel {
namespace {

std::vector<float> GaussianTable(Rng& rng, size_t rows, size_t cols) {
  std::vector<float> t(rows * cols);
  for (float& v : t) v = static_cast<float>(rng.Normal());
  return t;
}

uint64_t BigramBucket(int32_t prev, int32_t cur, int buckets) {
  uint64_t x =
      (static_cast<uint64_t>(static_cast<uint32_t>(prev)) << 32) | static_cast<uint32_t>(cur);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x % static_cast<uint64_t>(buckets);
}

constexpr int kNumSegments = 3;

// The segment after reading `token` in segment `seg`.
int NextSegment(int seg, int32_t token) {
  switch (token) {
    case Tokenizer::kAssistantId:
      return 2;
    case Tokenizer::kThinkStartId:
      return 1;
    case Tokenizer::kThinkEndId:
      return 2;
    case Tokenizer::kUserId:
    case Tokenizer::kSystemId:
    case Tokenizer::kEndId:
      return 0;
    default:
      return seg;
  }
}

bool IsMarker(int32_t token) { return NextSegment(-1, token) >= 0; }

}  // namespace

int SegmentOf(std::span<const int32_t> context) {
  for (size_t i = context.size(); i > 0; --i) {
    if (IsMarker(context[i - 1])) return NextSegment(0, context[i - 1]);
  }
  return 0;
}

std::string DefaultCorpusPath() { return LONGHAUL_REFMODEL_CORPUS; }
std::string DefaultPromptsPath() { return LONGHAUL_REFMODEL_PROMPTS; }

Result<std::unique_ptr<TargetModel>> TargetModel::FromCorpusText(std::string_view corpus,
                                                                 const TargetConfig& config) {
  if (config.order < 1 || config.order > KneserNeyModel::kMaxOrder) {
    return absl::InvalidArgumentError(StrCat("target order ", config.order, " out of range [1, ",
                                             KneserNeyModel::kMaxOrder, "]"));
  }
  if (config.hidden_size < 1 || config.high_top_k < 1 || config.mid_buckets < 1) {
    return absl::InvalidArgumentError("target hidden_size, high_top_k and mid_buckets must be > 0");
  }
  std::unique_ptr<TargetModel> m(new TargetModel());
  m->config_ = config;
  m->tokenizer_ = Tokenizer::FromCorpus(corpus);
  if (m->tokenizer_.size() > KneserNeyModel::kMaxVocab) {
    return absl::InvalidArgumentError(StrCat("corpus has ", m->tokenizer_.size(),
                                             " distinct tokens; at most ",
                                             KneserNeyModel::kMaxVocab, " are supported"));
  }
  std::vector<int32_t> ids = m->tokenizer_.Encode(corpus);
  if (ids.empty()) return absl::InvalidArgumentError("corpus has no tokens");
  std::vector<uint8_t> segments(ids.size());
  int seg = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    segments[i] = static_cast<uint8_t>(seg);
    seg = NextSegment(seg, ids[i]);
  }
  m->ngram_ =
      KneserNeyModel::Train(ids, segments, m->tokenizer_.size(), config.order, kNumSegments);
  m->copyable_.assign(m->tokenizer_.size(), 0);
  for (int32_t id = 0; id < m->tokenizer_.size(); ++id) {
    const std::string& t = m->tokenizer_.TokenText(id);
    m->copyable_[id] = !m->tokenizer_.IsSpecial(id) && id != m->tokenizer_.newline_id() &&
                       !(t.size() == 1 && std::ispunct(static_cast<unsigned char>(t[0])));
  }

  const size_t h = config.hidden_size;
  Rng rng(config.embed_seed);
  m->embed_ = GaussianTable(rng, m->tokenizer_.size(), h);
  m->mid_ = GaussianTable(rng, config.mid_buckets, h);
  m->proj_ = GaussianTable(rng, m->tokenizer_.size(), h);

  FieldHasher hasher;
  hasher.Add("longhaul-refmodel-target-v1");
  hasher.Add(corpus);
  hasher.Add(StrCat(config.order, "/", config.hidden_size, "/", config.high_top_k, "/",
                    config.mid_buckets, "/", config.embed_seed, "/", config.copy_weight_bigram, "/",
                    config.copy_weight_unigram, "/", config.repeat_damping));
  m->hash_ = hasher.HexDigest();
  return m;
}

Result<std::unique_ptr<TargetModel>> TargetModel::FromCorpusFile(const std::string& path,
                                                                 const TargetConfig& config) {
  auto text = ReadFile(path);
  if (!text.ok()) return Annotate(text.status(), "reading the target corpus");
  auto model = FromCorpusText(*text, config);
  if (!model.ok()) return Annotate(model.status(), StrCat("corpus ", path));
  return model;
}

void TargetModel::NextTokenProbs(std::span<const int32_t> context,
                                 std::vector<float>* probs) const {
  probs->resize(vocab_size());
  ngram_.Probs(SegmentOf(context), context, probs->data());
  MixCopyModel(context, probs->data());
}

void TargetModel::MixCopyModel(std::span<const int32_t> context, float* probs) const {
  // The current assistant turn starts after the last <|assistant|>; the conversation before it
  // is what answers copy from. Outside an assistant turn nothing changes.
  size_t turn = 0;
  bool in_turn = false;
  for (size_t i = context.size(); i > 0; --i) {
    int32_t t = context[i - 1];
    if (t == Tokenizer::kAssistantId) {
      turn = i;
      in_turn = true;
      break;
    }
    if (IsMarker(t) && t != Tokenizer::kThinkStartId && t != Tokenizer::kThinkEndId) return;
  }
  if (!in_turn) return;
  const size_t end = turn - 1;  // the <|assistant|> marker
  const size_t len = context.size();
  const int32_t b = context[len - 1];
  const int32_t a = len >= 2 ? context[len - 2] : -1;

  // Copy model: followers of (a, b), else of b alone when b is a word.
  int32_t followers[64];
  int n = 0;
  double lambda = 0;
  if (b != tokenizer_.newline_id() && !tokenizer_.IsSpecial(b)) {
    for (size_t j = 1; j + 1 < end && n < 64; ++j) {
      if (context[j - 1] == a && context[j] == b && copyable_[context[j + 1]]) {
        followers[n++] = context[j + 1];
      }
    }
    if (n > 0) {
      lambda = config_.copy_weight_bigram * n / (n + 1.0);
    } else if (copyable_[b]) {
      for (size_t j = 0; j + 1 < end && n < 64; ++j) {
        if (context[j] == b && copyable_[context[j + 1]]) followers[n++] = context[j + 1];
      }
      lambda = config_.copy_weight_unigram * n / (n + 1.0);
    }
  }
  if (n > 0) {
    const float keep = static_cast<float>(1.0 - lambda);
    const float each = static_cast<float>(lambda / n);
    for (int w = 0; w < vocab_size(); ++w) probs[w] *= keep;
    for (int k = 0; k < n; ++k) probs[followers[k]] += each;
  }

  // No verbatim loops: a token that would repeat a 4-gram already in this turn is damped, as
  // generation's no-repeat-ngram rule does, but inside the model so that speculative
  // verification sees the same distribution.
  if (len < turn + 4) return;
  const int32_t c = context[len - 3];
  int32_t repeats[64];
  int r = 0;
  for (size_t j = turn + 2; j + 1 < len && r < 64; ++j) {
    if (context[j - 2] == c && context[j - 1] == a && context[j] == b)
      repeats[r++] = context[j + 1];
  }
  if (r == 0) return;
  double removed = 0;
  for (int k = 0; k < r; ++k) {
    float& p = probs[repeats[k]];
    float damped = p * static_cast<float>(config_.repeat_damping);
    removed += p - damped;
    p = damped;
  }
  const float scale = static_cast<float>(1.0 / (1.0 - removed));
  for (int w = 0; w < vocab_size(); ++w) probs[w] *= scale;
}

std::span<const float> TargetModel::TokenEmbedding(int32_t token) const {
  const size_t h = config_.hidden_size;
  return std::span<const float>(embed_.data() + token * h, h);
}

void TargetModel::AuxHiddenState(std::span<const int32_t> context, std::span<const float> probs,
                                 float* out) const {
  const int h = config_.hidden_size;
  int32_t cur = context.back();
  int32_t prev = context.size() >= 2 ? context[context.size() - 2] : -1;
  std::memcpy(out, embed_.data() + static_cast<size_t>(cur) * h, h * sizeof(float));
  const float* mid = mid_.data() + BigramBucket(prev, cur, config_.mid_buckets) * h;
  std::memcpy(out + h, mid, h * sizeof(float));

  // Top-k of the distribution, ties by id, so the layer is a deterministic function of it.
  const int k = std::min<int>(config_.high_top_k, static_cast<int>(probs.size()));
  std::vector<int32_t> idx(probs.size());
  std::iota(idx.begin(), idx.end(), 0);
  auto better = [&](int32_t a, int32_t b) {
    return probs[a] != probs[b] ? probs[a] > probs[b] : a < b;
  };
  std::nth_element(idx.begin(), idx.begin() + (k - 1), idx.end(), better);
  std::sort(idx.begin(), idx.begin() + k, better);
  float* high = out + 2 * h;
  std::fill(high, high + h, 0.0f);
  for (int j = 0; j < k; ++j) {
    const float w = probs[idx[j]];
    const float* r = proj_.data() + static_cast<size_t>(idx[j]) * h;
    for (int d = 0; d < h; ++d) high[d] += w * r[d];
  }
}

void TargetModel::SequenceStates(std::span<const int32_t> ids, std::vector<float>* hidden,
                                 std::vector<float>* aux) const {
  const size_t h = config_.hidden_size;
  hidden->resize(ids.size() * h);
  aux->resize(ids.size() * 3 * h);
  std::vector<float> probs;
  for (size_t t = 0; t < ids.size(); ++t) {
    auto ctx = ids.subspan(0, t + 1);
    NextTokenProbs(ctx, &probs);
    float* a = aux->data() + t * 3 * h;
    AuxHiddenState(ctx, probs, a);
    std::memcpy(hidden->data() + t * h, a + 2 * h, h * sizeof(float));
  }
}

}  // namespace longhaul::refmodel
