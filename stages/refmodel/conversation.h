// Conversation samples as the campaign's data files hold them (docs/engines.md, "The EAGLE-3
// pipeline"), one JSON object per line:
//   {"id": ..., "conversations": [{"role": "user", "content": ...}, {"role": "assistant",
//    "content": ..., "reasoning": ...}], "reasoning": ...}
// Also accepted: "messages" for "conversations", ShareGPT turns ({"from": "human"|"gpt"|
// "system", "value": ...}), and "reasoning_content" for "reasoning". A top-level "reasoning"
// (lh-datagen's output) belongs to the last assistant turn.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "stages/refmodel/chat_template.h"

namespace longhaul::refmodel {

struct ConversationSample {
  std::string id;
  std::vector<ChatMessage> messages;
};

// `where` prefixes errors ("samples.jsonl:12"). A missing id becomes `fallback_id`.
Result<ConversationSample> ParseConversationLine(std::string_view line, const std::string& where,
                                                 const std::string& fallback_id);

// Every non-blank line of a JSONL file; errors name the file and line.
Result<std::vector<ConversationSample>> ReadConversationFile(const std::string& path);

}  // namespace longhaul::refmodel
