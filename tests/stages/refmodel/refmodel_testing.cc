#include "tests/stages/refmodel/refmodel_testing.h"

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "stages/refmodel/chat_template.h"
#include "stages/refmodel/draft_vocab.h"
#include "stages/refmodel/drafter_trainer.h"
#include "stages/refmodel/extraction.h"

namespace longhaul::refmodel::testing {
namespace {

template <typename T>
T CheckOk(Result<T> r, const char* what) {
  if (!r.ok()) {
    std::cerr << what << ": " << r.status() << "\n";
    std::abort();
  }
  return std::move(*r);
}

}  // namespace

const TargetModel& Target() {
  static const TargetModel* target =
      CheckOk(TargetModel::FromCorpusFile(DefaultCorpusPath()), "target").release();
  return *target;
}

const std::vector<ConversationSample>& Prompts() {
  static const auto* prompts = new std::vector<ConversationSample>(
      CheckOk(ReadConversationFile(DefaultPromptsPath()), "prompts"));
  return *prompts;
}

std::vector<int32_t> PromptIds(size_t i) {
  std::string text = CheckOk(RenderChat(Prompts().at(i).messages, true), "render");
  return Target().tokenizer().Encode(text);
}

std::vector<ConversationSample> AnswerPrompts(size_t first, size_t count, double temperature,
                                              int max_tokens) {
  SpecDecoder plain(&Target(), nullptr, 0);
  std::vector<ConversationSample> out;
  for (size_t i = first; i < first + count; ++i) {
    Sequence seq(PromptIds(i), SamplingParams{temperature, 1.0}, 1000 + i);
    std::vector<int32_t> gen = plain.Generate(&seq, max_tokens, nullptr);
    ConversationSample s = Prompts().at(i);
    s.messages.push_back(DecodeAssistantTurn(Target().tokenizer(), gen));
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<StateSequence> ExtractAll(const std::vector<ConversationSample>& samples) {
  std::vector<StateSequence> out;
  for (const ConversationSample& s : samples) {
    out.push_back(CheckOk(ExtractStates(Target(), s), "extract"));
  }
  return out;
}

std::vector<int64_t> AssistantTokenCounts(const std::vector<StateSequence>& data) {
  std::vector<int64_t> counts(Target().vocab_size(), 0);
  for (const StateSequence& s : data) {
    for (size_t t = 0; t < s.input_ids.size(); ++t) counts[s.input_ids[t]] += s.loss_mask[t];
  }
  return counts;
}

Drafter MakeDrafter(int epochs, int draft_vocab_size, int hidden_size) {
  static const std::vector<StateSequence>* data =
      new std::vector<StateSequence>(ExtractAll(AnswerPrompts(0, 200, 0.8)));
  DraftVocab vocab =
      CheckOk(BuildDraftVocab(AssistantTokenCounts(*data), draft_vocab_size), "vocab");
  DrafterConfig config;
  config.target_vocab_size = Target().vocab_size();
  config.target_hidden_size = Target().hidden_size();
  config.hidden_size = hidden_size;
  config.target_model_hash = Target().model_hash();
  Drafter drafter = CheckOk(Drafter::Create(config, std::move(vocab), 7), "drafter");
  DrafterTrainer trainer(&drafter, data, TrainerOptions{});
  for (int e = 1; e <= epochs; ++e) trainer.RunEpoch(e, nullptr);
  return drafter;
}

SpecRun RunSpeculative(const Drafter* drafter, DraftFeed feed, int k, double temperature,
                       size_t first, size_t count, int max_tokens) {
  SpecDecoder spec(&Target(), drafter, k, feed);
  SpecDecoder plain(&Target(), nullptr, 0);
  SpecRun run;
  for (size_t i = first; i < first + count; ++i) {
    Sequence a(PromptIds(i), SamplingParams{temperature, 1.0}, i);
    std::vector<int32_t> got = spec.Generate(&a, max_tokens, &run.counts);
    run.tokens += static_cast<int64_t>(got.size());
    if (temperature <= 0) {
      Sequence b(PromptIds(i), SamplingParams{temperature, 1.0}, i);
      if (got != plain.Generate(&b, max_tokens, nullptr)) ++run.mismatches;
    }
  }
  return run;
}

}  // namespace longhaul::refmodel::testing

namespace longhaul::refmodel::testing {

std::string SamplesJsonl(const std::vector<ConversationSample>& samples) {
  std::string out;
  for (const ConversationSample& s : samples) {
    nlohmann::json turns = nlohmann::json::array();
    std::string reasoning;
    for (const ChatMessage& m : s.messages) {
      turns.push_back({{"role", m.role}, {"content", m.content}});
      if (m.role == "assistant") reasoning = m.reasoning;
    }
    out += nlohmann::json{{"id", s.id}, {"conversations", turns}, {"reasoning", reasoning}}.dump();
    out += "\n";
  }
  return out;
}

}  // namespace longhaul::refmodel::testing
