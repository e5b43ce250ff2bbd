// The reference chat template, the one the corpus is written in:
//
//   <|system|>\nCONTENT<|end|>\n            (optional)
//   <|user|>\nCONTENT<|end|>\n
//   <|assistant|>\n[<think>\nREASONING\n</think>\n]CONTENT<|end|>\n
//
// A generation prompt ends with "<|assistant|>\n". The model then writes an optional
// <think>...</think> segment, the answer, and <|end|> (its end-of-sequence token).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "stages/refmodel/tokenizer.h"

namespace longhaul::refmodel {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
  std::string reasoning;  // assistant only; rendered as a <think> segment when not empty
};

// Text of `messages` in the template; InvalidArgument names a message with an unknown role
// ("messages[2].role: unknown role 'tool' (expected system, user or assistant)").
Result<std::string> RenderChat(const std::vector<ChatMessage>& messages,
                               bool add_generation_prompt);

// Tokens of the rendered conversation and a loss mask that is 1 exactly on the tokens an
// assistant turn generates (after "<|assistant|>\n", through its <|end|>).
struct RenderedChat {
  std::vector<int32_t> ids;
  std::vector<uint8_t> loss_mask;
};
Result<RenderedChat> RenderChatTokens(const Tokenizer& tokenizer,
                                      const std::vector<ChatMessage>& messages);

}  // namespace longhaul::refmodel

namespace longhaul::refmodel {

// The assistant turn the model generated (tokens after the generation prompt, up to <|end|>):
// text inside <think>...</think> goes to `reasoning`, the rest to `content`, both decoded with
// the tokenizer's spacing. Either may be empty.
ChatMessage DecodeAssistantTurn(const Tokenizer& tokenizer, std::span<const int32_t> generated);

}  // namespace longhaul::refmodel
