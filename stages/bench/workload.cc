#include "stages/bench/workload.h"

#include <algorithm>
#include <random>

#include "core/strings.h"
#include "stages/common/jsonl.h"

namespace longhaul::stages {
namespace {

constexpr int64_t kDefaultMaxTokens = 256;
constexpr size_t kMaxDistinctRandom = 1000;

constexpr const char* kWords[] = {
    "the",    "model",   "answer",  "question", "time",     "people", "water",   "number",
    "system", "program", "data",    "light",    "river",    "city",   "world",   "history",
    "music",  "paper",   "energy",  "market",   "language", "school", "garden",  "story",
    "field",  "power",   "health",  "science",  "problem",  "change", "voice",   "family",
    "money",  "island",  "machine", "theory",   "road",     "window", "morning", "ocean",
    "simple", "quick",   "careful", "bright",   "strong",   "small",  "ancient", "modern",
    "write",  "explain", "compute", "describe", "compare",  "build",  "measure", "find",
    "and",    "of",      "to",      "in",       "with",     "for",    "about",   "why",
};

std::string RandomPrompt(std::mt19937_64& rng, int64_t words) {
  std::uniform_int_distribution<size_t> pick(0, std::size(kWords) - 1);
  std::string out;
  for (int64_t i = 0; i < words; ++i) {
    if (i) out.push_back(' ');
    out += kWords[pick(rng)];
  }
  return out;
}

std::string Body(const BenchOptions& o, const GenerationParams& p,
                 const std::vector<ChatMessage>& messages) {
  if (o.api == OpenAiApi::kChat) return BuildChatRequest(messages, p);
  std::vector<std::string> parts;
  for (const auto& m : messages) parts.push_back(m.content);
  return BuildCompletionRequest(StrJoin(parts, "\n"), p);
}

}  // namespace

Result<Workload> BuildWorkload(const BenchOptions& o) {
  GenerationParams p;
  p.model = o.model;
  p.stream = true;
  p.include_usage = true;
  // vLLM then reports the running token count on every chunk, which gives exact per-token
  // inter-token latencies; servers that do not know the option ignore it.
  p.continuous_usage = true;
  p.temperature = o.temperature;
  p.max_tokens = o.max_tokens ? *o.max_tokens : o.random_output_len.value_or(kDefaultMaxTokens);
  Workload w;
  if (o.random_input_len) {
    p.ignore_eos = true;
    std::mt19937_64 rng(static_cast<uint64_t>(o.seed) * 7919 + 17);
    size_t n = kMaxDistinctRandom;
    if (o.num_requests) n = std::min<size_t>(n, static_cast<size_t>(*o.num_requests));
    for (size_t i = 0; i < n; ++i) {
      w.bodies.push_back(Body(o, p, {{"user", RandomPrompt(rng, *o.random_input_len)}}));
    }
    w.description = StrCat("random prompts: ", *o.random_input_len, " words in, ", *p.max_tokens,
                           " tokens out (ignore_eos), ", n, " distinct");
    return w;
  }
  ASSIGN_OR_RETURN(std::vector<Conversation> convs, ReadConversations(o.prompts_file));
  size_t skipped = 0;
  for (const auto& c : convs) {
    std::vector<ChatMessage> prefix;
    for (const auto& m : c.messages) {
      if (m.role == "assistant") break;
      prefix.push_back(m);
    }
    bool has_user = std::any_of(prefix.begin(), prefix.end(),
                                [](const ChatMessage& m) { return m.role == "user"; });
    if (!has_user) {
      ++skipped;
      continue;
    }
    w.bodies.push_back(Body(o, p, prefix));
  }
  if (w.bodies.empty()) {
    return absl::InvalidArgumentError(
        StrCat(o.prompts_file, ": no conversation starts with a user turn"));
  }
  w.description = StrCat("prompts from ", o.prompts_file, ": ", w.bodies.size(), " conversations (",
                         skipped, " without a user turn skipped), max_tokens ", *p.max_tokens);
  return w;
}

}  // namespace longhaul::stages
