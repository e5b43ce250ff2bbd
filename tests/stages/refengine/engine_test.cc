#include "stages/refengine/engine.h"

#include <gtest/gtest.h>

#include <map>

#include "stages/refmodel/chat_template.h"
#include "tests/stages/refmodel/refmodel_testing.h"

namespace longhaul::refengine {
namespace {

using refmodel::Drafter;
using refmodel::testing::MakeDrafter;
using refmodel::testing::PromptIds;
using refmodel::testing::Target;

EngineRequest Req(uint64_t id, size_t prompt, int max_tokens, double temperature = 0) {
  EngineRequest r;
  r.id = id;
  r.prompt = PromptIds(prompt);
  r.max_tokens = max_tokens;
  r.params = refmodel::SamplingParams{temperature, 1.0};
  r.seed = id;
  return r;
}

struct Collected {
  std::map<uint64_t, std::string> content, reasoning;
  std::map<uint64_t, int> tokens;
  std::map<uint64_t, std::string> finish;
  int steps = 0;
  double cost_ms = 0;
};

void Absorb(const StepOutcome& o, Collected* c) {
  ++c->steps;
  c->cost_ms += o.cost_ms;
  for (const RequestOutput& r : o.outputs) {
    c->content[r.id] += r.delta.content;
    c->reasoning[r.id] += r.delta.reasoning;
    c->tokens[r.id] += r.new_tokens;
    EXPECT_EQ(c->tokens[r.id], r.completion_tokens);
    if (r.finished) c->finish[r.id] = r.finish_reason;
  }
}

Collected RunToEnd(Engine& e, Collected c = {}) {
  while (e.HasWork()) Absorb(e.Step(), &c);
  return c;
}

TEST(EngineTest, BatchesUpToMaxBatchAndCountsTokens) {
  EngineOptions opt;
  opt.max_batch = 2;
  opt.target_step_ms = 10;
  opt.prefill_ms_per_token = 0.5;
  Engine e(&Target(), nullptr, opt);
  for (uint64_t id = 1; id <= 3; ++id) e.Add(Req(id, id, 5));
  StepOutcome first = e.Step();
  EXPECT_EQ(first.batch_size, 2);
  EXPECT_EQ(e.num_running(), 2);
  EXPECT_EQ(e.num_waiting(), 1);
  int prompt = static_cast<int>(PromptIds(1).size() + PromptIds(2).size());
  EXPECT_EQ(first.prefill_tokens, prompt);
  EXPECT_DOUBLE_EQ(first.cost_ms, 10 + 0.5 * prompt);
  Collected c;
  Absorb(first, &c);
  c = RunToEnd(e, c);
  for (uint64_t id = 1; id <= 3; ++id) {
    EXPECT_EQ(c.finish[id], "length");
    EXPECT_EQ(c.tokens[id], 5);
  }
  EXPECT_EQ(e.stats().generation_tokens, 15);
  EXPECT_EQ(e.stats().requests_finished, 3);
  EXPECT_EQ(e.stats().spec.drafts, 0);
}

TEST(EngineTest, CancelDropsARequest) {
  Engine e(&Target(), nullptr, EngineOptions{});
  e.Add(Req(1, 0, 50));
  e.Add(Req(2, 1, 50));
  Collected c;
  Absorb(e.Step(), &c);
  e.Cancel(1);
  c = RunToEnd(e, c);
  EXPECT_EQ(c.finish.count(1), 0u);
  EXPECT_EQ(c.finish.count(2), 1u);
}

TEST(EngineTest, SpeculativeEngineIsLosslessAndCheaperPerToken) {
  Drafter drafter = MakeDrafter(2);
  EngineOptions plain_opt;
  plain_opt.target_step_ms = 10;
  EngineOptions spec_opt = plain_opt;
  spec_opt.num_speculative_tokens = 3;
  spec_opt.draft_step_ms = 1;
  Engine plain(&Target(), nullptr, plain_opt);
  Engine spec(&Target(), &drafter, spec_opt);
  for (uint64_t id = 1; id <= 8; ++id) {
    plain.Add(Req(id, 300 + id, 80));
    spec.Add(Req(id, 300 + id, 80));
  }
  Collected a = RunToEnd(plain);
  Collected b = RunToEnd(spec);
  EXPECT_EQ(a.content, b.content);
  EXPECT_EQ(a.reasoning, b.reasoning);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(plain.stats().generation_tokens, spec.stats().generation_tokens);
  const auto& s = spec.stats().spec;
  EXPECT_GT(s.drafts, 0);
  EXPECT_EQ(s.draft_tokens, 3 * s.drafts);
  EXPECT_LT(b.steps, a.steps);
  EXPECT_LT(b.cost_ms, a.cost_ms);  // 13 ms per round beats 10 ms per token here
  EXPECT_GT(spec.stats().last_batch_rounds, 0);
}

}  // namespace
}  // namespace longhaul::refengine
