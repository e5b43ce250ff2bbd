#include "stages/refmodel/conversation.h"

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::refmodel {
namespace {

std::string StringField(const nlohmann::json& turn, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = turn.find(k);
    if (it != turn.end() && it->is_string()) return it->get<std::string>();
  }
  return "";
}

Result<std::string> Role(const nlohmann::json& turn, const std::string& where) {
  std::string role = StringField(turn, {"role", "from"});
  if (role == "human") return std::string("user");
  if (role == "gpt" || role == "model") return std::string("assistant");
  if (role == "system" || role == "user" || role == "assistant") return role;
  return absl::InvalidArgumentError(StrCat(where, ": role '", role,
                                           "' (expected system, user or assistant; or ShareGPT's "
                                           "human/gpt)"));
}

}  // namespace

Result<ConversationSample> ParseConversationLine(std::string_view line, const std::string& where,
                                                 const std::string& fallback_id) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(StrCat(where, ": not JSON: ", e.what()));
  }
  if (!j.is_object()) return absl::InvalidArgumentError(StrCat(where, ": not a JSON object"));
  ConversationSample s;
  if (auto it = j.find("id"); it != j.end() && it->is_string()) {
    s.id = it->get<std::string>();
  } else if (it != j.end() && it->is_number_integer()) {
    s.id = std::to_string(it->get<int64_t>());
  } else {
    s.id = fallback_id;
  }
  const nlohmann::json* turns = nullptr;
  for (const char* key : {"conversations", "messages"}) {
    if (auto it = j.find(key); it != j.end()) turns = &*it;
  }
  if (turns == nullptr || !turns->is_array()) {
    return absl::InvalidArgumentError(
        StrCat(where, ": needs a 'conversations' (or 'messages') list"));
  }
  for (size_t i = 0; i < turns->size(); ++i) {
    const nlohmann::json& turn = (*turns)[i];
    std::string turn_where = StrCat(where, ": conversations[", i, "]");
    if (!turn.is_object()) return absl::InvalidArgumentError(turn_where + ": not an object");
    ChatMessage m;
    ASSIGN_OR_RETURN(m.role, Role(turn, turn_where));
    m.content = StringField(turn, {"content", "value"});
    m.reasoning = StringField(turn, {"reasoning", "reasoning_content"});
    s.messages.push_back(std::move(m));
  }
  std::string top_reasoning = StringField(j, {"reasoning", "reasoning_content"});
  if (!top_reasoning.empty()) {
    for (auto it = s.messages.rbegin(); it != s.messages.rend(); ++it) {
      if (it->role != "assistant") continue;
      if (it->reasoning.empty()) it->reasoning = top_reasoning;
      break;
    }
  }
  return s;
}

Result<std::vector<ConversationSample>> ReadConversationFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::vector<ConversationSample> out;
  size_t line_no = 0;
  for (const std::string& line : StrSplit(text, '\n')) {
    ++line_no;
    if (StripWhitespace(line).empty()) continue;
    ASSIGN_OR_RETURN(ConversationSample s, ParseConversationLine(line, StrCat(path, ":", line_no),
                                                                 StrCat("line-", line_no)));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace longhaul::refmodel
