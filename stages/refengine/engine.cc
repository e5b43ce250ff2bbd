#include "stages/refengine/engine.h"

#include <algorithm>

namespace longhaul::refengine {

using refmodel::Sequence;
using refmodel::StepResult;
using refmodel::Tokenizer;

struct Engine::Active {
  Active(EngineRequest r, const Tokenizer* tok)
      : req(std::move(r)),
        seq(req.prompt, req.params, req.seed),
        out(tok, req.chat, req.ignore_eos, req.stop, req.prompt.empty() ? -1 : req.prompt.back()) {}
  EngineRequest req;
  Sequence seq;
  OutputProcessor out;
  int generated = 0;
  bool finished = false;
  std::string finish_reason;
};

Engine::Engine(const refmodel::TargetModel* target, const refmodel::Drafter* drafter,
               EngineOptions options)
    : target_(target),
      options_(options),
      decoder_(target, drafter, options.num_speculative_tokens, options.feed) {}

Engine::~Engine() = default;

void Engine::Add(EngineRequest request) {
  waiting_.push_back(std::make_unique<Active>(std::move(request), &target_->tokenizer()));
}

void Engine::Cancel(uint64_t id) {
  auto match = [id](const std::unique_ptr<Active>& a) { return a->req.id == id; };
  waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), match), waiting_.end());
  running_.erase(std::remove_if(running_.begin(), running_.end(), match), running_.end());
}

void Engine::Admit(StepOutcome* out) {
  while (!waiting_.empty() && static_cast<int>(running_.size()) < options_.max_batch) {
    out->prefill_tokens += static_cast<int>(waiting_.front()->req.prompt.size());
    stats_.prompt_tokens += static_cast<int64_t>(waiting_.front()->req.prompt.size());
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
}

StepOutcome Engine::Step() {
  StepOutcome out;
  Admit(&out);
  if (running_.empty()) return out;
  ++stats_.steps;
  out.batch_size = static_cast<int>(running_.size());
  for (auto& a : running_) {
    StepResult r = decoder_.Step(&a->seq);
    stats_.spec.Add(r);
    if (r.speculative) {
      ++out.spec_rounds;
      out.drafted += r.drafted;
      out.accepted += r.accepted;
    }
    RequestOutput o;
    o.id = a->req.id;
    for (int32_t t : r.tokens) {
      ++a->generated;
      ++o.new_tokens;
      if (!a->out.Add(t)) {
        a->finished = true;
        a->finish_reason = "stop";
        break;
      }
      if (a->generated >= a->req.max_tokens) {
        a->finished = true;
        a->finish_reason = "length";
        break;
      }
    }
    out.generated += o.new_tokens;
    o.delta = a->out.TakeDelta(a->finished);
    o.completion_tokens = a->generated;
    o.prompt_tokens = static_cast<int>(a->req.prompt.size());
    o.finished = a->finished;
    o.finish_reason = a->finish_reason;
    out.outputs.push_back(std::move(o));
  }
  stats_.generation_tokens += out.generated;
  if (out.spec_rounds > 0) {
    stats_.last_batch_rounds = out.spec_rounds;
    stats_.last_batch_drafted = out.drafted;
    stats_.last_batch_accepted = out.accepted;
  }
  auto done = [](const std::unique_ptr<Active>& a) { return a->finished; };
  stats_.requests_finished += std::count_if(running_.begin(), running_.end(), done);
  running_.erase(std::remove_if(running_.begin(), running_.end(), done), running_.end());

  out.cost_ms = options_.target_step_ms + options_.prefill_ms_per_token * out.prefill_tokens;
  if (out.spec_rounds > 0) out.cost_ms += options_.num_speculative_tokens * options_.draft_step_ms;
  return out;
}

}  // namespace longhaul::refengine
