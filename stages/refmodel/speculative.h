// Decoding one sequence with the target alone or with draft-then-verify speculative decoding.
//
// A Sequence holds the prompt and every emitted token. The last emitted token is "pending":
// the target has not processed it yet. Each Step() is one target forward:
//   - first step (prefill): the prompt -> the first token;
//   - target only: the pending token -> one token;
//   - speculative: the drafter proposes k tokens from the target's aux hidden state at the
//     last processed position t (EAGLE: aux(t) with the embedding of the pending x_{t+1}), the
//     target scores the pending token and all k drafts at once (k+1 distributions), and the
//     standard rule accepts a prefix: greedy - accept while the draft equals the target's
//     argmax, then emit the target's argmax (so the output equals target-only greedy decoding);
//     sampling - accept draft x with probability min(1, p(x)/q(x)), on rejection draw from
//     normalize(max(0, p - q)); with all k accepted, a bonus token from the target.
// DraftFeed::kMisaligned reproduces an engine integration bug: the drafter gets aux(t-1).
// Outputs stay correct (verification guarantees them); acceptance drops.
//
// A SpecDecoder is immutable and thread-safe; a Sequence belongs to one caller.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stages/refmodel/drafter.h"
#include "stages/refmodel/sampling.h"
#include "stages/refmodel/target_model.h"

namespace longhaul::refmodel {

enum class DraftFeed { kCorrect, kMisaligned };

struct Sequence {
  Sequence(std::vector<int32_t> prompt, SamplingParams params, uint64_t seed);

  std::vector<int32_t> tokens;  // prompt, then every emitted token
  size_t prompt_len = 0;
  SamplingParams params;
  Rng rng;
  bool prefilled = false;
  // Aux hidden states (3H) of the last two positions the target processed.
  std::vector<float> aux_last;
  std::vector<float> aux_prev;
};

struct StepResult {
  std::vector<int32_t> tokens;  // emitted by this step, in order (>= 1)
  bool speculative = false;     // a draft-and-verify round (not a prefill, not target-only)
  int drafted = 0;
  int accepted = 0;
};

// Counters in vLLM's sense: one draft per speculative round; accepted_per_pos[i] counts rounds
// whose i-th draft was accepted (so it is non-increasing in i and sums to `accepted`).
struct SpecCounts {
  int64_t drafts = 0;
  int64_t draft_tokens = 0;
  int64_t accepted = 0;
  std::vector<int64_t> accepted_per_pos;

  void Add(const StepResult& r);
  double AcceptanceRate() const { return draft_tokens ? double(accepted) / draft_tokens : 0; }
  // Mean tokens per round, the bonus/correction token included (vLLM's mean acceptance length).
  double MeanAcceptanceLength() const { return drafts ? 1.0 + double(accepted) / drafts : 0; }
};

class SpecDecoder {
 public:
  // `drafter` may be null (target-only decoding); when set, REQUIRES
  // drafter->CheckTarget(*target).ok() and num_speculative_tokens >= 1.
  SpecDecoder(const TargetModel* target, const Drafter* drafter, int num_speculative_tokens,
              DraftFeed feed = DraftFeed::kCorrect);

  StepResult Step(Sequence* seq) const;
  // Decodes until max_new_tokens or the end token; returns the new tokens (end included).
  std::vector<int32_t> Generate(Sequence* seq, int max_new_tokens, SpecCounts* counts) const;

  bool speculative() const { return drafter_ != nullptr; }
  int num_speculative_tokens() const { return k_; }
  const TargetModel& target() const { return *target_; }

 private:
  StepResult Prefill(Sequence* seq) const;
  StepResult TargetOnly(Sequence* seq) const;
  StepResult SpeculativeRound(Sequence* seq) const;

  const TargetModel* target_;
  const Drafter* drafter_;
  int k_;
  DraftFeed feed_;
};

}  // namespace longhaul::refmodel
