#include "stages/refengine/openai_api.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/json_string.h"
#include "core/strings.h"

namespace longhaul::refengine {
namespace {

using json = nlohmann::json;

Status Bad(std::string_view msg) { return absl::InvalidArgumentError(std::string(msg)); }

Result<json> ParseBody(std::string_view body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    return Bad(StrCat("request body is not JSON: ", e.what()));
  }
  if (!j.is_object()) return Bad("request body must be a JSON object");
  return j;
}

// Fields both APIs share.
Status ParseCommon(const json& j, ApiRequest* r) {
  if (auto it = j.find("model"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Bad("'model' must be a string");
    r->model = it->get<std::string>();
  }
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > 1'000'000) {
      return Bad(StrCat("'", key, "' must be an integer in [1, 1000000]"));
    }
    r->max_tokens = static_cast<int>(it->get<int64_t>());
  }
  if (auto it = j.find("temperature"); it != j.end() && !it->is_null()) {
    if (!it->is_number() || it->get<double>() < 0) {
      return Bad("'temperature' must be a number >= 0");
    }
    r->temperature = it->get<double>();
  }
  if (auto it = j.find("top_p"); it != j.end() && !it->is_null()) {
    if (!it->is_number() || it->get<double>() <= 0 || it->get<double>() > 1) {
      return Bad("'top_p' must be a number in (0, 1]");
    }
    r->top_p = it->get<double>();
  }
  if (auto it = j.find("seed"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer()) return Bad("'seed' must be an integer");
    r->seed = static_cast<uint64_t>(it->get<int64_t>());
  }
  if (auto it = j.find("n"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() != 1) return Bad("'n' must be 1");
  }
  if (auto it = j.find("stop"); it != j.end() && !it->is_null()) {
    if (it->is_string()) {
      r->stop.push_back(it->get<std::string>());
    } else if (it->is_array()) {
      for (const json& s : *it) {
        if (!s.is_string()) return Bad("'stop' must be a string or a list of strings");
        r->stop.push_back(s.get<std::string>());
      }
    } else {
      return Bad("'stop' must be a string or a list of strings");
    }
  }
  if (auto it = j.find("stream"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return Bad("'stream' must be a boolean");
    r->stream = it->get<bool>();
  }
  if (auto it = j.find("stream_options"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return Bad("'stream_options' must be an object");
    if (auto u = it->find("include_usage"); u != it->end() && !u->is_null()) {
      if (!u->is_boolean()) return Bad("'stream_options.include_usage' must be a boolean");
      r->include_usage = u->get<bool>();
    }
  }
  if (auto it = j.find("ignore_eos"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) return Bad("'ignore_eos' must be a boolean");
    r->ignore_eos = it->get<bool>();
  }
  return OkStatus();
}

Result<std::string> ContentText(const json& content, size_t index) {
  if (content.is_null()) return std::string();
  if (content.is_string()) return content.get<std::string>();
  if (content.is_array()) {
    std::string text;
    for (const json& part : content) {
      if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
          !part["text"].is_string()) {
        return Bad(StrCat("'messages[", index, "].content': only text parts are supported"));
      }
      text += part["text"].get<std::string>();
    }
    return text;
  }
  return Bad(StrCat("'messages[", index, "].content' must be a string or a list of text parts"));
}

json Usage(int prompt_tokens, int completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

json FinishReason(const std::string& reason) {
  return reason.empty() ? json(nullptr) : json(reason);
}

std::string Event(const json& j) { return StrCat("data: ", j.dump(), "\n\n"); }

}  // namespace

Result<ApiRequest> ParseChatRequest(std::string_view body) {
  ASSIGN_OR_RETURN(json j, ParseBody(body));
  ApiRequest r;
  r.chat = true;
  RETURN_IF_ERROR(ParseCommon(j, &r));
  auto it = j.find("messages");
  if (it == j.end() || !it->is_array() || it->empty()) {
    return Bad("'messages' must be a non-empty list");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return Bad(StrCat("'messages[", i, "]' must be an object with a string 'role'"));
    }
    refmodel::ChatMessage msg;
    msg.role = m["role"].get<std::string>();
    if (msg.role == "developer") msg.role = "system";
    if (msg.role != "system" && msg.role != "user" && msg.role != "assistant") {
      return Bad(StrCat("'messages[", i, "].role': unknown role '", msg.role,
                        "' (expected system, user or assistant)"));
    }
    ASSIGN_OR_RETURN(msg.content, ContentText(m.value("content", json(nullptr)), i));
    for (const char* key : {"reasoning", "reasoning_content"}) {
      if (m.contains(key) && m[key].is_string()) msg.reasoning = m[key].get<std::string>();
    }
    r.messages.push_back(std::move(msg));
  }
  return r;
}

Result<ApiRequest> ParseCompletionRequest(std::string_view body) {
  ASSIGN_OR_RETURN(json j, ParseBody(body));
  ApiRequest r;
  r.chat = false;
  RETURN_IF_ERROR(ParseCommon(j, &r));
  auto it = j.find("prompt");
  if (it != j.end() && it->is_array() && it->size() == 1 && (*it)[0].is_string()) {
    r.prompt = (*it)[0].get<std::string>();
  } else if (it != j.end() && it->is_string()) {
    r.prompt = it->get<std::string>();
  } else {
    return Bad("'prompt' must be a string (or a list of one string)");
  }
  if (r.prompt.empty()) return Bad("'prompt' must not be empty");
  return r;
}

std::string ChatResponseJson(const ResponseMeta& meta, const std::string& content,
                             const std::string& reasoning, const std::string& finish_reason,
                             int prompt_tokens, int completion_tokens) {
  json message = {{"role", "assistant"}, {"content", content}};
  message[meta.reasoning_field] = reasoning.empty() ? json(nullptr) : json(reasoning);
  json j = {{"id", meta.id},
            {"object", "chat.completion"},
            {"created", meta.created},
            {"model", meta.model},
            {"choices", json::array({{{"index", 0},
                                      {"message", message},
                                      {"logprobs", nullptr},
                                      {"finish_reason", FinishReason(finish_reason)}}})},
            {"usage", Usage(prompt_tokens, completion_tokens)}};
  return j.dump();
}

std::string CompletionResponseJson(const ResponseMeta& meta, const std::string& text,
                                   const std::string& finish_reason, int prompt_tokens,
                                   int completion_tokens) {
  json j = {{"id", meta.id},
            {"object", "text_completion"},
            {"created", meta.created},
            {"model", meta.model},
            {"choices", json::array({{{"index", 0},
                                      {"text", text},
                                      {"logprobs", nullptr},
                                      {"finish_reason", FinishReason(finish_reason)}}})},
            {"usage", Usage(prompt_tokens, completion_tokens)}};
  return j.dump();
}

// Chunks are the hot path of streaming (one per request per engine step), so they are
// written as text rather than built as json objects; the keys match the json builders above.
std::string ChatChunkEvent(const ResponseMeta& meta, const TextDelta& delta, bool with_role,
                           const std::string& finish_reason) {
  std::string out =
      StrCat("data: {\"id\":", JsonQuote(meta.id),
             ",\"object\":\"chat.completion.chunk\",\"created\":", meta.created,
             ",\"model\":", JsonQuote(meta.model), ",\"choices\":[{\"index\":0,\"delta\":{");
  bool first = true;
  auto field = [&](std::string_view key, const std::string& value) {
    out += StrCat(first ? "" : ",", "\"", key, "\":", JsonQuote(value));
    first = false;
  };
  if (with_role) field("role", "assistant");
  if (!delta.reasoning.empty()) field(meta.reasoning_field, delta.reasoning);
  if (!delta.content.empty() || (with_role && delta.reasoning.empty()))
    field("content", delta.content);
  out += StrCat("},\"logprobs\":null,\"finish_reason\":",
                finish_reason.empty() ? std::string("null") : JsonQuote(finish_reason), "}]}\n\n");
  return out;
}

std::string CompletionChunkEvent(const ResponseMeta& meta, const std::string& text,
                                 const std::string& finish_reason) {
  return StrCat("data: {\"id\":", JsonQuote(meta.id),
                ",\"object\":\"text_completion\",\"created\":", meta.created,
                ",\"model\":", JsonQuote(meta.model),
                ",\"choices\":[{\"index\":0,\"text\":", JsonQuote(text),
                ",\"logprobs\":null,\"finish_reason\":",
                finish_reason.empty() ? std::string("null") : JsonQuote(finish_reason), "}]}\n\n");
}

std::string UsageChunkEvent(const ResponseMeta& meta, bool chat, int prompt_tokens,
                            int completion_tokens) {
  json j = {{"id", meta.id},
            {"object", chat ? "chat.completion.chunk" : "text_completion"},
            {"created", meta.created},
            {"model", meta.model},
            {"choices", json::array()},
            {"usage", Usage(prompt_tokens, completion_tokens)}};
  return Event(j);
}

std::string ErrorJson(int http_status, std::string_view message) {
  const char* type = http_status == 404   ? "NotFoundError"
                     : http_status == 503 ? "ServiceUnavailableError"
                     : http_status >= 500 ? "InternalServerError"
                                          : "BadRequestError";
  json j = {{"error",
             {{"message", std::string(message)},
              {"type", type},
              {"param", nullptr},
              {"code", http_status}}}};
  return j.dump();
}

}  // namespace longhaul::refengine
