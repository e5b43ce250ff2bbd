#include "stages/refmodel/speculative.h"

#include <algorithm>
#include <cmath>

namespace longhaul::refmodel {
namespace {

// Softmax of draft logits after the request's temperature and top-p, scattered onto the
// target vocabulary (zero outside the draft vocabulary), as the q of the acceptance rule.
void DraftProbs(const Drafter& drafter, std::span<const float> logits, const SamplingParams& params,
                int target_vocab, std::vector<float>* q) {
  const int n = static_cast<int>(logits.size());
  std::vector<float> p(n);
  float mx = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (int i = 0; i < n; ++i) {
    p[i] = std::exp(logits[i] - mx);
    total += p[i];
  }
  for (float& v : p) v = static_cast<float>(v / total);
  std::vector<float> processed;
  ProcessProbs(p, params, &processed);
  q->assign(target_vocab, 0.0f);
  for (int i = 0; i < n; ++i) (*q)[drafter.ToTarget(i)] = processed[i];
}

// The next token from the target's distribution under the request's sampling rule.
int32_t Choose(std::span<const float> probs, Sequence* seq, std::vector<float>* scratch) {
  if (seq->params.greedy()) return Argmax(probs);
  ProcessProbs(probs, seq->params, scratch);
  return SampleIndex(*scratch, seq->rng);
}

}  // namespace

Sequence::Sequence(std::vector<int32_t> prompt, SamplingParams params, uint64_t seed)
    : tokens(std::move(prompt)), prompt_len(tokens.size()), params(params), rng(seed) {}

void SpecCounts::Add(const StepResult& r) {
  if (!r.speculative) return;
  ++drafts;
  draft_tokens += r.drafted;
  accepted += r.accepted;
  if (accepted_per_pos.size() < static_cast<size_t>(r.drafted)) {
    accepted_per_pos.resize(r.drafted, 0);
  }
  for (int i = 0; i < r.accepted; ++i) ++accepted_per_pos[i];
}

SpecDecoder::SpecDecoder(const TargetModel* target, const Drafter* drafter,
                         int num_speculative_tokens, DraftFeed feed)
    : target_(target), drafter_(drafter), k_(num_speculative_tokens), feed_(feed) {}

StepResult SpecDecoder::Step(Sequence* seq) const {
  if (!seq->prefilled) return Prefill(seq);
  if (drafter_ == nullptr) return TargetOnly(seq);
  return SpeculativeRound(seq);
}

StepResult SpecDecoder::Prefill(Sequence* seq) const {
  std::vector<float> probs, processed;
  std::span<const int32_t> prompt(seq->tokens);
  target_->NextTokenProbs(prompt, &probs);
  if (drafter_ != nullptr && !prompt.empty()) {
    seq->aux_last.resize(target_->aux_size());
    target_->AuxHiddenState(prompt, probs, seq->aux_last.data());
    seq->aux_prev.assign(target_->aux_size(), 0.0f);
    if (prompt.size() >= 2) {
      std::vector<float> prev_probs;
      auto prev = prompt.first(prompt.size() - 1);
      target_->NextTokenProbs(prev, &prev_probs);
      target_->AuxHiddenState(prev, prev_probs, seq->aux_prev.data());
    }
  }
  int32_t y = Choose(probs, seq, &processed);
  seq->tokens.push_back(y);
  seq->prefilled = true;
  return StepResult{.tokens = {y}};
}

StepResult SpecDecoder::TargetOnly(Sequence* seq) const {
  std::vector<float> probs, processed;
  target_->NextTokenProbs(seq->tokens, &probs);
  int32_t y = Choose(probs, seq, &processed);
  seq->tokens.push_back(y);
  return StepResult{.tokens = {y}};
}

StepResult SpecDecoder::SpeculativeRound(Sequence* seq) const {
  const int D = drafter_->hidden_size();
  const int V = target_->vocab_size();
  const bool greedy = seq->params.greedy();
  if (seq->aux_last.empty()) {
    // An empty prompt left no processed position to draft from: one target-only step, after
    // which there is one.
    std::vector<float> probs;
    target_->NextTokenProbs(seq->tokens, &probs);
    StepResult r = TargetOnly(seq);
    seq->aux_prev.assign(target_->aux_size(), 0.0f);
    seq->aux_last.resize(target_->aux_size());
    target_->AuxHiddenState(std::span<const int32_t>(seq->tokens).first(seq->tokens.size() - 1),
                            probs, seq->aux_last.data());
    return r;
  }

  // Draft k tokens.
  std::vector<int32_t> drafts(k_);
  std::vector<std::vector<float>> q(greedy ? 0 : k_);
  std::vector<float> h(D), a(D), logits(drafter_->draft_vocab_size());
  drafter_->Fuse(feed_ == DraftFeed::kCorrect ? seq->aux_last.data() : seq->aux_prev.data(),
                 h.data());
  int32_t last = seq->tokens.back();
  for (int i = 0; i < k_; ++i) {
    drafter_->Step(h.data(), target_->TokenEmbedding(last).data(), a.data(), logits.data());
    if (greedy) {
      drafts[i] = drafter_->ToTarget(Argmax(logits));
    } else {
      DraftProbs(*drafter_, logits, seq->params, V, &q[i]);
      drafts[i] = SampleIndex(q[i], seq->rng);
    }
    last = drafts[i];
    h.swap(a);
  }

  // Verify: one target pass scores the pending token and every draft (k+1 distributions).
  std::vector<int32_t> ctx = seq->tokens;
  std::vector<std::vector<float>> p(k_ + 1);
  for (int i = 0; i <= k_; ++i) {
    target_->NextTokenProbs(ctx, &p[i]);
    if (i < k_) ctx.push_back(drafts[i]);
  }

  StepResult r;
  r.speculative = true;
  r.drafted = k_;
  std::vector<float> processed;
  int accepted = 0;
  int32_t y = -1;
  for (; accepted < k_; ++accepted) {
    const int i = accepted;
    int32_t d = drafts[i];
    if (greedy) {
      int32_t best = Argmax(p[i]);
      if (d != best) {
        y = best;
        break;
      }
      continue;
    }
    ProcessProbs(p[i], seq->params, &processed);
    double pd = processed[d], qd = q[i][d];
    if (qd > 0 && seq->rng.Uniform() < std::min(1.0, pd / qd)) continue;
    // Rejected: draw from the residual normalize(max(0, p - q)).
    for (int w = 0; w < V; ++w) processed[w] = std::max(0.0f, processed[w] - q[i][w]);
    y = SampleIndex(processed, seq->rng);
    break;
  }
  if (accepted == k_) y = Choose(p[k_], seq, &processed);
  r.accepted = accepted;

  // The target processed the pending token and the accepted drafts: keep the aux states of the
  // last two of those positions for the next round.
  const size_t base = seq->tokens.size();  // tokens[base-1] is the pending token
  std::vector<float> prev(target_->aux_size());
  std::span<const int32_t> all(ctx);
  auto aux_at = [&](int j, float* out) {  // j = 0: pending; j >= 1: draft j-1
    target_->AuxHiddenState(all.first(base + j), p[j], out);
  };
  if (accepted == 0) {
    prev.swap(seq->aux_last);
    seq->aux_last.resize(target_->aux_size());
  } else {
    aux_at(accepted - 1, prev.data());
  }
  aux_at(accepted, seq->aux_last.data());
  seq->aux_prev.swap(prev);

  for (int i = 0; i < accepted; ++i) r.tokens.push_back(drafts[i]);
  r.tokens.push_back(y);
  seq->tokens.insert(seq->tokens.end(), r.tokens.begin(), r.tokens.end());
  return r;
}

std::vector<int32_t> SpecDecoder::Generate(Sequence* seq, int max_new_tokens,
                                           SpecCounts* counts) const {
  std::vector<int32_t> out;
  while (static_cast<int>(out.size()) < max_new_tokens) {
    StepResult r = Step(seq);
    if (counts != nullptr) counts->Add(r);
    for (int32_t t : r.tokens) {
      out.push_back(t);
      if (t == Tokenizer::kEndId || static_cast<int>(out.size()) == max_new_tokens) return out;
    }
  }
  return out;
}

}  // namespace longhaul::refmodel
