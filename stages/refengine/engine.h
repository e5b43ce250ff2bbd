// The refengine's continuous-batching engine, without any I/O or clock.
//
// Requests wait in FIFO order and are admitted while fewer than max_batch run. One Step() is
// one forward pass of the target over every running request: a newly admitted request is
// prefilled and gets its first token; every other request decodes one token, or, with a
// drafter, runs one draft-then-verify round (speculative.h) and gets 1..k+1 tokens.
// Step() reports the simulated time the step takes under the cost model
//   cost = target_step_ms                            (any request ran)
//        + k * draft_step_ms                         (any speculative round ran)
//        + prefill_ms_per_token * prompt tokens admitted this step
// i.e. the memory-bound regime where a decode step costs the same for 1 or max_batch
// requests and verifying k+1 tokens costs one step: that is where speculation pays.
// Every counter in stats() comes from what the steps computed. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stages/refengine/output_processor.h"
#include "stages/refmodel/speculative.h"

namespace longhaul::refengine {

struct EngineOptions {
  int max_batch = 256;
  int num_speculative_tokens = 3;
  refmodel::DraftFeed feed = refmodel::DraftFeed::kCorrect;
  double target_step_ms = 0;
  double draft_step_ms = 0;
  double prefill_ms_per_token = 0;
};

struct EngineRequest {
  uint64_t id = 0;
  std::vector<int32_t> prompt;
  int max_tokens = 16;
  refmodel::SamplingParams params;
  uint64_t seed = 0;
  bool chat = true;
  bool ignore_eos = false;  // keep generating past <|end|> (benchmarks with fixed lengths)
  std::vector<std::string> stop;
};

// What one step produced for one request.
struct RequestOutput {
  uint64_t id = 0;
  TextDelta delta;
  int new_tokens = 0;  // tokens generated this step (after cut-off by end/stop/max_tokens)
  int completion_tokens = 0;
  int prompt_tokens = 0;
  bool finished = false;
  std::string finish_reason;  // "stop" or "length" when finished
};

struct StepOutcome {
  std::vector<RequestOutput> outputs;
  double cost_ms = 0;
  int batch_size = 0;
  int prefill_tokens = 0;
  int spec_rounds = 0;
  int drafted = 0;
  int accepted = 0;
  int generated = 0;
};

struct EngineStats {
  int64_t prompt_tokens = 0;
  int64_t generation_tokens = 0;
  int64_t requests_finished = 0;
  int64_t steps = 0;
  refmodel::SpecCounts spec;
  // The latest step that ran a speculative round (SGLang's per-batch gauges).
  int64_t last_batch_rounds = 0;
  int64_t last_batch_drafted = 0;
  int64_t last_batch_accepted = 0;
};

class Engine {
 public:
  // `drafter` may be null (no speculative decoding). Both must outlive the engine.
  Engine(const refmodel::TargetModel* target, const refmodel::Drafter* drafter,
         EngineOptions options);
  ~Engine();

  void Add(EngineRequest request);
  // Drops a waiting or running request; no further output for it. Unknown ids are ignored.
  void Cancel(uint64_t id);
  bool HasWork() const { return !waiting_.empty() || !running_.empty(); }
  StepOutcome Step();

  int num_running() const { return static_cast<int>(running_.size()); }
  int num_waiting() const { return static_cast<int>(waiting_.size()); }
  const EngineStats& stats() const { return stats_; }
  const EngineOptions& options() const { return options_; }
  bool speculative() const { return decoder_.speculative(); }

 private:
  struct Active;
  void Admit(StepOutcome* out);

  const refmodel::TargetModel* target_;
  EngineOptions options_;
  refmodel::SpecDecoder decoder_;
  std::deque<std::unique_ptr<Active>> waiting_;
  std::vector<std::unique_ptr<Active>> running_;
  EngineStats stats_;
};

}  // namespace longhaul::refengine
