#include "stages/common/jsonl.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::stages {
namespace {

using nlohmann::json;

Status Bad(std::string_view where, std::string_view why) {
  return absl::InvalidArgumentError(StrCat(where, ": ", why));
}

std::string_view NormaliseRole(std::string_view role) {
  if (role == "human" || role == "user") return "user";
  if (role == "gpt" || role == "assistant" || role == "chatgpt" || role == "bard" ||
      role == "bing" || role == "model") {
    return "assistant";
  }
  if (role == "system") return "system";
  return {};
}

Result<std::string> Text(const json& turn, const char* key, std::string_view where) {
  auto it = turn.find(key);
  if (it == turn.end()) return Bad(where, StrCat("missing '", key, "'"));
  if (it->is_null()) return std::string();
  if (!it->is_string()) return Bad(where, StrCat("'", key, "': expected a string"));
  return it->get<std::string>();
}

// Splits `text` into lines, tracking 1-based numbers, and hands each non-blank one to `fn`.
template <typename Fn>
Status ForEachLine(std::string_view text, Fn fn) {
  size_t start = 0;
  int line_no = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view line = StripWhitespace(text.substr(start, end - start));
    start = end + 1;
    if (!line.empty()) RETURN_IF_ERROR(fn(line, line_no));
  }
  return OkStatus();
}

}  // namespace

Result<Conversation> ParseConversation(const json& record, std::string_view where, size_t index) {
  if (!record.is_object()) return Bad(where, "expected a JSON object");
  Conversation c;
  auto id = record.find("id");
  if (id == record.end() || id->is_null()) {
    c.id_json = std::to_string(index);
  } else if (id->is_string() || id->is_number_integer()) {
    c.id_json = *id;
  } else {
    return Bad(where, "'id': expected a string or an integer");
  }
  c.id = c.id_json.is_string() ? c.id_json.get<std::string>() : c.id_json.dump();

  const json* turns = nullptr;
  for (const char* key : {"conversations", "messages", "conversation"}) {
    auto it = record.find(key);
    if (it != record.end()) {
      turns = &*it;
      break;
    }
  }
  if (turns == nullptr) return Bad(where, "missing 'conversations' (or 'messages')");
  if (!turns->is_array()) return Bad(where, "'conversations': expected an array");
  for (size_t i = 0; i < turns->size(); ++i) {
    const json& t = (*turns)[i];
    std::string at = StrCat(where, ": conversations[", i, "]");
    if (!t.is_object()) return Bad(at, "expected an object");
    ChatMessage m;
    std::string role;
    if (t.contains("role")) {
      ASSIGN_OR_RETURN(role, Text(t, "role", at));
      ASSIGN_OR_RETURN(m.content, Text(t, "content", at));
    } else if (t.contains("from")) {
      ASSIGN_OR_RETURN(role, Text(t, "from", at));
      ASSIGN_OR_RETURN(m.content, Text(t, "value", at));
    } else {
      return Bad(at, "expected 'role' and 'content' (or ShareGPT's 'from' and 'value')");
    }
    for (const char* key : {"reasoning", "reasoning_content"}) {
      auto r = t.find(key);
      if (r != t.end() && r->is_string() && m.reasoning.empty()) m.reasoning = *r;
    }
    std::string_view norm = NormaliseRole(role);
    if (norm.empty()) return Bad(at, StrCat("unknown role '", role, "'"));
    m.role = std::string(norm);
    c.messages.push_back(std::move(m));
  }
  auto reasoning = record.find("reasoning");
  if (reasoning != record.end() && reasoning->is_string()) c.reasoning = *reasoning;
  return c;
}

Result<std::vector<Conversation>> ReadConversations(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::vector<Conversation> out;
  std::string_view body = StripWhitespace(text);
  if (!body.empty() && body.front() == '[') {
    json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_array()) {
      return Bad(path, "starts with '[' but is not a valid JSON array");
    }
    for (size_t i = 0; i < doc.size(); ++i) {
      ASSIGN_OR_RETURN(Conversation c, ParseConversation(doc[i], StrCat(path, ": record ", i), i));
      out.push_back(std::move(c));
    }
    return out;
  }
  RETURN_IF_ERROR(ForEachLine(text, [&](std::string_view line, int line_no) -> Status {
    std::string where = StrCat(path, ":", line_no);
    json doc = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return Bad(where, "not valid JSON");
    ASSIGN_OR_RETURN(Conversation c, ParseConversation(doc, where, out.size()));
    out.push_back(std::move(c));
    return OkStatus();
  }));
  return out;
}

json ConversationToJson(const Conversation& c) {
  json turns = json::array();
  for (const auto& m : c.messages) {
    json t = {{"role", m.role}, {"content", m.content}};
    if (!m.reasoning.empty()) t["reasoning"] = m.reasoning;
    turns.push_back(std::move(t));
  }
  json out = {{"id", c.id_json.is_null() ? json(c.id) : c.id_json},
              {"conversations", std::move(turns)}};
  out["reasoning"] = c.reasoning.empty() ? json(nullptr) : json(c.reasoning);
  return out;
}

Result<JsonlRecovery> RecoverJsonl(const std::string& path) {
  JsonlRecovery out;
  if (!PathExists(path)) return out;
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  size_t complete = text.rfind('\n');
  complete = complete == std::string::npos ? 0 : complete + 1;
  if (complete < text.size()) {
    out.truncated_bytes = static_cast<int64_t>(text.size() - complete);
    if (::truncate(path.c_str(), static_cast<off_t>(complete)) != 0) {
      return ErrnoStatus("truncate torn last line of", path, errno);
    }
    text.resize(complete);
  }
  RETURN_IF_ERROR(ForEachLine(text, [&](std::string_view line, int line_no) -> Status {
    json doc = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
      return absl::DataLossError(StrCat(path, ":", line_no, ": not valid JSON (corrupt file?)"));
    }
    out.records.push_back(std::move(doc));
    return OkStatus();
  }));
  return out;
}

Result<JsonlAppender> JsonlAppender::Open(const std::string& path) {
  JsonlAppender a;
  a.fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (a.fd_ < 0) return ErrnoStatus("open for appending", path, errno);
  a.path_ = path;
  return a;
}

JsonlAppender& JsonlAppender::operator=(JsonlAppender&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

JsonlAppender::~JsonlAppender() {
  if (fd_ >= 0) ::close(fd_);
}

Status JsonlAppender::Append(const json& record) {
  if (fd_ < 0) return absl::FailedPreconditionError("JSONL appender is not open");
  std::string line = record.dump(-1, ' ', false, json::error_handler_t::replace);
  line.push_back('\n');
  // One write(2): O_APPEND makes it atomic with respect to other appenders; a short write
  // (disk full) is finished by the loop, and a crash in between leaves a torn line that
  // RecoverJsonl cuts off.
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = ::write(fd_, line.data() + off, line.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("append to", path_, errno);
    }
    off += static_cast<size_t>(n);
  }
  return OkStatus();
}

Status JsonlAppender::Sync() {
  if (fd_ >= 0 && ::fdatasync(fd_) != 0) return ErrnoStatus("fdatasync", path_, errno);
  return OkStatus();
}

}  // namespace longhaul::stages
