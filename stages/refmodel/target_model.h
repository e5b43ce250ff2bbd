// The target model of the reference engine, trained from a text corpus at start-up, with
// EAGLE-style hidden states.
//
// Next-token distribution: p(w | ctx) = (1 - lambda) p_KN(w | segment, last 3 tokens)
//                                      + lambda p_copy(w | ctx)
//   - p_KN: interpolated Kneser-Ney 4-gram (kneser_ney.h) conditioned on the segment the
//     context ends in: 0 = system/user text, 1 = assistant reasoning (<think>...), 2 = answer.
//   - p_copy: in assistant segments only, an in-context copy model (an "induction head"): the
//     words that followed the last two tokens (else the last token) in the conversation before
//     the last <|assistant|>; lambda = copy_weight * n / (n + 1) for n matches. It lets
//     answers name the entities of the question, which three tokens of history cannot.
//   - then, in an assistant turn, a token that would repeat a 4-gram already in the turn is
//     damped (x repeat_damping, renormalized), so greedy decoding does not loop forever.
//
// Hidden states, per position t (the token x_t with everything before it), H = hidden_size:
//   layer 0 "low":    E[x_t], the token embedding (also the drafter's input embedding)
//   layer 1 "middle": M[hash(x_{t-1}, x_t) mod mid_buckets], a hashed embedding of the bigram
//   layer 2 "high":   sum over the top-k tokens w of p(w | x_<=t) * R[w], a projection of the
//                     target's own next-token distribution
// E, M and R are fixed Gaussian tables drawn from embed_seed. aux_hidden_state is the three
// layers concatenated (3H); hidden_state, the last layer, is "high" (H), as the final layer of a
// real model is the one its LM head reads. Immutable after construction; thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "stages/refmodel/kneser_ney.h"
#include "stages/refmodel/tokenizer.h"

namespace longhaul::refmodel {

struct TargetConfig {
  int order = 4;
  int hidden_size = 32;
  int high_top_k = 16;
  int mid_buckets = 16384;
  uint64_t embed_seed = 0x5eed'1e55'0000'0001ull;
  double copy_weight_bigram = 0.5;   // lambda scale when the last two tokens match
  double copy_weight_unigram = 0.2;  // when only the last token matches
  double repeat_damping = 0.02;      // factor on a token that would repeat a 4-gram of the turn
};

// The segment a context ends in (0 user/system text, 1 reasoning, 2 answer), from the last
// template marker in it.
int SegmentOf(std::span<const int32_t> context);

// The corpus compiled into the build (stages/refmodel/corpus/corpus.txt) and its prompts.
std::string DefaultCorpusPath();
std::string DefaultPromptsPath();

class TargetModel {
 public:
  static constexpr int kNumAuxLayers = 3;

  static Result<std::unique_ptr<TargetModel>> FromCorpusText(std::string_view corpus,
                                                             const TargetConfig& config = {});
  // Errors name the path.
  static Result<std::unique_ptr<TargetModel>> FromCorpusFile(const std::string& path,
                                                             const TargetConfig& config = {});

  const Tokenizer& tokenizer() const { return tokenizer_; }
  const TargetConfig& config() const { return config_; }
  int vocab_size() const { return tokenizer_.size(); }
  int hidden_size() const { return config_.hidden_size; }
  int aux_size() const { return kNumAuxLayers * config_.hidden_size; }
  // Lower-case hex SHA-256 of the corpus and every setting that shapes the distributions or
  // the hidden states: a drafter records it and is refused by any other target.
  const std::string& model_hash() const { return hash_; }

  // p(. | context) into probs (resized to vocab_size()); sums to 1.
  void NextTokenProbs(std::span<const int32_t> context, std::vector<float>* probs) const;
  // The aux hidden state (3H floats) at the last position of `context`, where `probs` is
  // NextTokenProbs(context). REQUIRES: context not empty.
  void AuxHiddenState(std::span<const int32_t> context, std::span<const float> probs,
                      float* out) const;
  // E[token]: layer "low", H floats.
  std::span<const float> TokenEmbedding(int32_t token) const;
  // Every position of `ids`: hidden (L x H) and aux (L x 3H), row-major.
  void SequenceStates(std::span<const int32_t> ids, std::vector<float>* hidden,
                      std::vector<float>* aux) const;

 private:
  TargetModel() = default;
  void MixCopyModel(std::span<const int32_t> context, float* probs) const;

  TargetConfig config_;
  Tokenizer tokenizer_;
  KneserNeyModel ngram_;
  std::string hash_;
  std::vector<float> embed_;       // vocab x H
  std::vector<float> mid_;         // mid_buckets x H
  std::vector<float> proj_;        // vocab x H
  std::vector<uint8_t> copyable_;  // by id: a word the copy model may propose
};

}  // namespace longhaul::refmodel
