#include "stages/refmodel/chat_template.h"

#include "core/strings.h"

namespace longhaul::refmodel {
namespace {

Status CheckRole(const ChatMessage& m, size_t index) {
  if (m.role == "system" || m.role == "user" || m.role == "assistant") return OkStatus();
  return absl::InvalidArgumentError(StrCat("messages[", index, "].role: unknown role '", m.role,
                                           "' (expected system, user or assistant)"));
}

// The assistant body: reasoning and answer with the corpus's exact newlines, whatever
// whitespace a client trimmed or kept around them, so regenerated data tokenizes as the model
// generated it.
std::string AssistantBody(const ChatMessage& m) {
  std::string body;
  std::string_view reasoning = StripWhitespace(m.reasoning);
  if (!reasoning.empty())
    body = StrCat(Tokenizer::kThinkStart, "\n", reasoning, "\n", Tokenizer::kThinkEnd, "\n");
  body += std::string(StripWhitespace(m.content));
  return body;
}

}  // namespace

Result<std::string> RenderChat(const std::vector<ChatMessage>& messages,
                               bool add_generation_prompt) {
  std::string out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    RETURN_IF_ERROR(CheckRole(m, i));
    std::string body = m.role == "assistant" ? AssistantBody(m) : m.content;
    out += StrCat("<|", m.role, "|>\n", body, Tokenizer::kEnd, "\n");
  }
  if (add_generation_prompt) out += StrCat(Tokenizer::kAssistant, "\n");
  return out;
}

Result<RenderedChat> RenderChatTokens(const Tokenizer& tokenizer,
                                      const std::vector<ChatMessage>& messages) {
  RenderedChat out;
  auto append = [&](const std::vector<int32_t>& ids, uint8_t mask) {
    out.ids.insert(out.ids.end(), ids.begin(), ids.end());
    out.loss_mask.insert(out.loss_mask.end(), ids.size(), mask);
  };
  // Special tokens always split, so encoding piece by piece gives the same ids as encoding
  // the whole text, and tells which ids the assistant produced.
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    RETURN_IF_ERROR(CheckRole(m, i));
    append(tokenizer.Encode(StrCat("<|", m.role, "|>\n")), 0);
    bool assistant = m.role == "assistant";
    append(tokenizer.Encode(StrCat(assistant ? AssistantBody(m) : m.content, Tokenizer::kEnd)),
           assistant ? 1 : 0);
    append(tokenizer.Encode("\n"), 0);
  }
  return out;
}

}  // namespace longhaul::refmodel

namespace longhaul::refmodel {

ChatMessage DecodeAssistantTurn(const Tokenizer& tokenizer, std::span<const int32_t> generated) {
  ChatMessage m;
  m.role = "assistant";
  std::string* out = &m.content;
  int32_t prev = -1;
  for (int32_t id : generated) {
    if (id == Tokenizer::kEndId) break;
    if (id == Tokenizer::kThinkStartId || id == Tokenizer::kThinkEndId) {
      out = id == Tokenizer::kThinkStartId ? &m.reasoning : &m.content;
      prev = -1;
      continue;
    }
    // Spacing restarts at a section boundary, as the server's streamed deltas do.
    if (out->empty()) prev = -1;
    tokenizer.AppendPiece(prev, id, out);
    prev = id;
  }
  return m;
}

}  // namespace longhaul::refmodel
