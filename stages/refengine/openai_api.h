// The OpenAI-compatible request and response bodies lh-refengine speaks (docs/engines.md,
// "OpenAI-compatible API"): parsing with errors that name the field, and JSON builders for
// whole responses and SSE chunks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "stages/refengine/output_processor.h"
#include "stages/refmodel/chat_template.h"

namespace longhaul::refengine {

struct ApiRequest {
  bool chat = true;
  std::string model;                            // empty when not given
  std::vector<refmodel::ChatMessage> messages;  // chat
  std::string prompt;                           // completions
  std::optional<int> max_tokens;
  double temperature = 1.0;
  double top_p = 1.0;
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;
  bool ignore_eos = false;
};

// InvalidArgument with the field: "'temperature' must be a number >= 0".
Result<ApiRequest> ParseChatRequest(std::string_view body);
Result<ApiRequest> ParseCompletionRequest(std::string_view body);

struct ResponseMeta {
  std::string id;
  int64_t created = 0;
  std::string model;
  std::string reasoning_field = "reasoning";  // or "reasoning_content"
};

std::string ChatResponseJson(const ResponseMeta& meta, const std::string& content,
                             const std::string& reasoning, const std::string& finish_reason,
                             int prompt_tokens, int completion_tokens);
std::string CompletionResponseJson(const ResponseMeta& meta, const std::string& text,
                                   const std::string& finish_reason, int prompt_tokens,
                                   int completion_tokens);
// One SSE event "data: {...}\n\n". A chat chunk carries reasoning and/or content in `delta`
// (with role "assistant" when `with_role`); finish_reason is null until the last chunk.
std::string ChatChunkEvent(const ResponseMeta& meta, const TextDelta& delta, bool with_role,
                           const std::string& finish_reason);
std::string CompletionChunkEvent(const ResponseMeta& meta, const std::string& text,
                                 const std::string& finish_reason);
// The stream_options.include_usage chunk: empty choices, usage set.
std::string UsageChunkEvent(const ResponseMeta& meta, bool chat, int prompt_tokens,
                            int completion_tokens);
inline constexpr std::string_view kDoneEvent = "data: [DONE]\n\n";

// {"error": {"message", "type", "param": null, "code"}}
std::string ErrorJson(int http_status, std::string_view message);

}  // namespace longhaul::refengine
