// The EAGLE-3-shaped drafter: a small recurrent MLP over a draft vocabulary.
//
//   g      = fc.weight * aux(t) + fc.bias                       (3H -> D: fuses the 3 layers)
//   a_1    = tanh(layer.weight * [g ; E[x_{t+1}]] + layer.bias)   (D + H -> D)
//   logits = lm_head.weight * a_1 + lm_head.bias                 (D -> N draft tokens)
// Step i > 1 feeds its own a_{i-1} in place of g and the embedding of its own last draft, as
// EAGLE does. E is the target's token embedding (TargetModel::TokenEmbedding).
//
// Checkpoint: a directory with config.json, weights.bin (fc.*, layer.*, lm_head.*), d2t.bin
// and t2d.bin (tensor_file.h). Load() checks every shape against config.json and names the
// file and tensor that disagree; CheckTarget() refuses a drafter trained for another target.
// Thread-safe for concurrent const use.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "stages/refmodel/draft_vocab.h"
#include "stages/refmodel/target_model.h"

namespace longhaul::refmodel {

struct DrafterConfig {
  int target_vocab_size = 0;
  int target_hidden_size = 0;  // H
  int hidden_size = 0;         // D
  std::vector<int> aux_layer_ids = {0, 1, 2};
  std::string target_model_hash;
  nlohmann::json training = nlohmann::json::object();  // informational: epochs, data, loss
};

struct DrafterWeights {
  std::vector<float> fc_w;    // D x 3H
  std::vector<float> fc_b;    // D
  std::vector<float> in_w;    // D x (D + H)
  std::vector<float> in_b;    // D
  std::vector<float> head_w;  // N x D
  std::vector<float> head_b;  // N
};

class Drafter {
 public:
  static constexpr int kFormatVersion = 1;

  // A freshly initialised (untrained) drafter: Xavier-uniform weights from `seed`, zero biases.
  static Result<Drafter> Create(const DrafterConfig& config, DraftVocab vocab, uint64_t seed);
  static Result<Drafter> Load(const std::string& dir);
  // Writes the four files into `dir` (created if missing), each atomically.
  Status Save(const std::string& dir) const;
  // FailedPrecondition naming what differs (model hash, vocab size, hidden size, layers).
  Status CheckTarget(const TargetModel& target) const;

  void Fuse(const float* aux, float* g) const;
  // One drafting step: `h` (D) is g or the previous step's `a`; `e` (H) the token embedding.
  void Step(const float* h, const float* e, float* a, float* logits) const;
  int32_t ToTarget(int32_t draft_id) const { return vocab_.draft_to_target[draft_id]; }

  const DrafterConfig& config() const { return config_; }
  DrafterConfig& mutable_config() { return config_; }
  const DraftVocab& vocab() const { return vocab_; }
  int draft_vocab_size() const { return vocab_.size(); }
  int hidden_size() const { return config_.hidden_size; }
  int target_hidden_size() const { return config_.target_hidden_size; }
  const DrafterWeights& weights() const { return w_; }
  DrafterWeights& mutable_weights() { return w_; }

 private:
  DrafterConfig config_;
  DraftVocab vocab_;
  DrafterWeights w_;
};

// y[r] = b[r] + sum_c W[r][c] x[c] for a rows x cols row-major W.
void MatVec(const float* w, const float* b, const float* x, int rows, int cols, float* y);
float Dot(const float* a, const float* b, int n);

}  // namespace longhaul::refmodel
