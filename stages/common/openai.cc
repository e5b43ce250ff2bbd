#include "stages/common/openai.h"

#include "core/strings.h"

namespace longhaul::stages {
namespace {

using nlohmann::json;

void AddCommon(json& req, const GenerationParams& p) {
  req["model"] = p.model;
  if (p.max_tokens) req["max_tokens"] = *p.max_tokens;
  if (p.temperature) req["temperature"] = *p.temperature;
  if (p.top_p) req["top_p"] = *p.top_p;
  if (p.seed) req["seed"] = *p.seed;
  if (p.ignore_eos) req["ignore_eos"] = true;
  req["stream"] = p.stream;
  if (p.stream && (p.include_usage || p.continuous_usage)) {
    json opts = json::object();
    if (p.include_usage) opts["include_usage"] = true;
    if (p.continuous_usage) opts["continuous_usage_stats"] = true;
    req["stream_options"] = opts;
  }
  if (p.extra.is_object()) {
    for (auto it = p.extra.begin(); it != p.extra.end(); ++it) req[it.key()] = it.value();
  }
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// A string field that may be missing or null.
void ReadText(const json& obj, const char* key, std::string& out) {
  auto it = obj.find(key);
  if (it != obj.end() && it->is_string()) out = it->get<std::string>();
}

void ReadReasoning(const json& obj, std::string& out) {
  ReadText(obj, "reasoning", out);
  if (out.empty()) ReadText(obj, "reasoning_content", out);
}

Result<std::optional<Usage>> ReadUsage(const json& doc) {
  auto it = doc.find("usage");
  if (it == doc.end() || it->is_null()) return std::optional<Usage>();
  if (!it->is_object()) return absl::InvalidArgumentError("usage: expected an object");
  Usage u;
  auto pt = it->find("prompt_tokens");
  if (pt != it->end() && pt->is_number_integer()) u.prompt_tokens = pt->get<int64_t>();
  auto ct = it->find("completion_tokens");
  if (ct != it->end() && ct->is_number_integer()) u.completion_tokens = ct->get<int64_t>();
  return std::optional<Usage>(u);
}

Status ErrorObject(const json& doc) {
  auto it = doc.find("error");
  if (it == doc.end() || it->is_null()) return OkStatus();
  std::string msg = it->is_object() && it->contains("message") && (*it)["message"].is_string()
                        ? (*it)["message"].get<std::string>()
                        : Dump(*it);
  return absl::UnavailableError(StrCat("server error in response: ", msg));
}

}  // namespace

Result<OpenAiApi> ParseOpenAiApi(std::string_view name) {
  if (name == "chat") return OpenAiApi::kChat;
  if (name == "completions") return OpenAiApi::kCompletions;
  return absl::InvalidArgumentError(StrCat("api '", name, "': expected 'chat' or 'completions'"));
}

std::string_view OpenAiApiName(OpenAiApi api) {
  return api == OpenAiApi::kChat ? "chat" : "completions";
}

std::string_view OpenAiApiPath(OpenAiApi api) {
  return api == OpenAiApi::kChat ? "/v1/chat/completions" : "/v1/completions";
}

std::string BuildChatRequest(const std::vector<ChatMessage>& messages,
                             const GenerationParams& params) {
  json req = json::object();
  json msgs = json::array();
  for (const auto& m : messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
  req["messages"] = std::move(msgs);
  AddCommon(req, params);
  return Dump(req);
}

std::string BuildCompletionRequest(std::string_view prompt, const GenerationParams& params) {
  json req = json::object();
  req["prompt"] = prompt;
  AddCommon(req, params);
  return Dump(req);
}

// ParseStreamEvent is in stream_event_parser.cc.

Result<Completion> ParseCompletionResponse(std::string_view body) {
  json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return absl::InvalidArgumentError(
        StrCat("response is not a JSON object: '", body.substr(0, 120), "'"));
  }
  RETURN_IF_ERROR(ErrorObject(doc));
  Completion out;
  ASSIGN_OR_RETURN(out.usage, ReadUsage(doc));
  auto choices = doc.find("choices");
  if (choices == doc.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].is_object()) {
    return absl::InvalidArgumentError("response has no choices[0]");
  }
  const json& c = (*choices)[0];
  auto message = c.find("message");
  if (message != c.end() && message->is_object()) {
    ReadText(*message, "content", out.content);
    ReadReasoning(*message, out.reasoning);
  } else {
    ReadText(c, "text", out.content);
  }
  ReadText(c, "finish_reason", out.finish_reason);
  return out;
}

void Accumulate(const StreamDelta& delta, Completion& out) {
  out.content += delta.content;
  out.reasoning += delta.reasoning;
  if (!delta.finish_reason.empty()) out.finish_reason = delta.finish_reason;
  if (delta.usage) out.usage = delta.usage;
}

std::string ErrorBodyText(std::string_view body) {
  json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_object()) {
    auto err = doc.find("error");
    if (err != doc.end()) {
      if (err->is_object() && err->contains("message") && (*err)["message"].is_string()) {
        return (*err)["message"].get<std::string>();
      }
      if (err->is_string()) return err->get<std::string>();
    }
    for (const char* key : {"message", "detail"}) {
      auto it = doc.find(key);
      if (it != doc.end()) return it->is_string() ? it->get<std::string>() : Dump(*it);
    }
  }
  std::string text(StripWhitespace(body.substr(0, 200)));
  return text.empty() ? "(empty body)" : text;
}

}  // namespace longhaul::stages
