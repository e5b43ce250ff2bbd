// Requests to and responses from OpenAI-compatible servers (vLLM, SGLang, lh-refengine), as
// docs/engines.md describes them: chat and completions, streaming or not.
//
// Reasoning text is read from `reasoning` (current vLLM) or `reasoning_content` (SGLang,
// older vLLM), in `message` and in stream `delta`. Usage comes from the final usage chunk
// (stream_options.include_usage) or the response's `usage`; vLLM can also put a cumulative
// usage on every chunk (stream_options.continuous_usage_stats), which gives exact token
// counts per chunk when the server offers it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace longhaul::stages {

enum class OpenAiApi { kChat, kCompletions };

// "chat" or "completions".
Result<OpenAiApi> ParseOpenAiApi(std::string_view name);
std::string_view OpenAiApiName(OpenAiApi api);
// "/v1/chat/completions" or "/v1/completions".
std::string_view OpenAiApiPath(OpenAiApi api);

struct ChatMessage {
  ChatMessage() = default;
  ChatMessage(std::string r, std::string c, std::string reason = "")
      : role(std::move(r)), content(std::move(c)), reasoning(std::move(reason)) {}

  std::string role;  // "system", "user", "assistant"
  std::string content;
  std::string reasoning;  // an assistant turn's reasoning text; never sent in requests
};

struct GenerationParams {
  std::string model;
  std::optional<int64_t> max_tokens;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int64_t> seed;
  bool stream = true;
  bool include_usage = true;      // stream_options.include_usage (streaming only)
  bool continuous_usage = false;  // stream_options.continuous_usage_stats (vLLM extension)
  bool ignore_eos = false;        // vLLM/SGLang extension: generate exactly max_tokens
  nlohmann::json extra;           // an object merged into the request last, or null
};

std::string BuildChatRequest(const std::vector<ChatMessage>& messages,
                             const GenerationParams& params);
std::string BuildCompletionRequest(std::string_view prompt, const GenerationParams& params);

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

// One event of a streamed response.
struct StreamDelta {
  bool done = false;          // the "[DONE]" sentinel
  std::string content;        // choices[0].delta.content (chat) or choices[0].text
  std::string reasoning;      // choices[0].delta.reasoning or .reasoning_content
  std::string finish_reason;  // "" while generating
  std::optional<Usage> usage;
};

// Parses the data of one SSE event. Errors: not JSON, or an in-stream error object
// ({"error": {...}}), whose message is returned.
Result<StreamDelta> ParseStreamEvent(std::string_view data);

// A whole (non-streamed) response, or the sum of a stream.
struct Completion {
  std::string content;
  std::string reasoning;
  std::string finish_reason;
  std::optional<Usage> usage;
};

// Parses a non-streaming chat or completions response body.
Result<Completion> ParseCompletionResponse(std::string_view body);

// Adds one stream delta to `out`.
void Accumulate(const StreamDelta& delta, Completion& out);

// A short human-readable text of an error body: {"error":{"message":..}}, {"message":..},
// {"detail":..} or, failing that, the first 200 bytes of the body.
std::string ErrorBodyText(std::string_view body);

}  // namespace longhaul::stages
