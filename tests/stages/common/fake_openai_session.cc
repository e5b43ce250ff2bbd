#include <optional>

#include "core/strings.h"
#include "tests/stages/common/fake_openai_internal.h"

namespace longhaul::testing {

namespace {

std::string Chunk(std::string_view data) {
  char hex[20];
  std::snprintf(hex, sizeof hex, "%zx\r\n", data.size());
  std::string out = hex;
  out.append(data);
  out += "\r\n";
  return out;
}

std::string SseChunk(const json& j) { return Chunk(StrCat("data: ", j.dump(), "\n\n")); }

int64_t CountWords(std::string_view s) {
  int64_t n = 0;
  bool in = false;
  for (char c : s) {
    bool sp = c == ' ' || c == '\n' || c == '\t';
    if (!sp && !in) ++n;
    in = !sp;
  }
  return n;
}

std::string_view Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

}  // namespace

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket sock, FakeOpenAiServer::Impl* impl)
      : sock_(std::move(sock)), timer_(sock_.get_executor()), impl_(impl) {}

  void Read() {
    parser_.emplace();
    parser_->body_limit(64 << 20);
    http::async_read(sock_, buf_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return;
                       self->Handle();
                     });
  }

 private:
  void Handle();
  void Generate(const json& req, bool chat);
  void SendStatus(int status, std::string_view content_type, std::string body,
                  std::string extra_headers = "");
  void WriteThenRead(std::string data) {
    out_ = std::move(data);
    asio::async_write(sock_, asio::buffer(out_),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) return;
                        if (!self->keep_alive_) {
                          beast::error_code ignored;
                          self->sock_.shutdown(tcp::socket::shutdown_send, ignored);
                          return;
                        }
                        self->Read();
                      });
  }
  void StreamNext();

  tcp::socket sock_;
  asio::steady_timer timer_;
  FakeOpenAiServer::Impl* impl_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string out_;
  std::vector<std::string> pending_;  // stream pieces still to send
  size_t next_ = 0;
  bool keep_alive_ = true;
  bool drop_after_first_ = false;
};

void Session::SendStatus(int status, std::string_view content_type, std::string body,
                         std::string extra_headers) {
  std::string head =
      StrCat("HTTP/1.1 ", status, " ", Reason(status), "\r\nContent-Type: ", content_type,
             "\r\nContent-Length: ", body.size(), "\r\n", extra_headers,
             keep_alive_ ? "" : "Connection: close\r\n", "\r\n");
  WriteThenRead(head + body);
}

void Session::Handle() {
  auto& req = parser_->get();
  keep_alive_ = req.keep_alive() && impl_->options_.keep_alive;
  std::string target(req.target().data(), req.target().size());
  if (req.method() == http::verb::get) {
    if (target == "/health") {
      bool ok = impl_->healthy_;
      return SendStatus(ok ? 200 : 503, "text/plain", ok ? "" : "unhealthy");
    }
    if (target == "/metrics") return SendStatus(200, "text/plain; version=0.0.4", impl_->Metrics());
    if (target == "/get_server_info") {
      double len =
          impl_->drafts_ > 0 ? 1.0 + static_cast<double>(impl_->accepted_) / impl_->drafts_ : 0.0;
      json info = {{"internal_states", json::array({{{"avg_spec_accept_length", len},
                                                     {"last_gen_throughput", 100.0}}})}};
      return SendStatus(200, "application/json", info.dump());
    }
    if (target == "/v1/models") {
      return SendStatus(200, "application/json",
                        R"({"object":"list","data":[{"id":"fake-model","object":"model"}]})");
    }
    return SendStatus(404, "application/json", R"({"error":{"message":"not found"}})");
  }
  bool chat = target == "/v1/chat/completions";
  if (req.method() != http::verb::post || (!chat && target != "/v1/completions")) {
    return SendStatus(404, "application/json", R"({"error":{"message":"not found"}})");
  }
  json body = json::parse(req.body(), nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return SendStatus(400, "application/json", R"({"error":{"message":"bad json"}})");
  }
  ++impl_->generation_requests_;
  int status = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    impl_->requests_.push_back(body);
    if (!impl_->statuses_.empty()) {
      status = impl_->statuses_.front();
      impl_->statuses_.pop_front();
    } else if (impl_->fail_when_) {
      status = impl_->fail_when_(body);
    }
  }
  if (impl_->hang_) {  // keep the connection open, never answer
    std::lock_guard<std::mutex> lock(impl_->mu_);
    impl_->hung_.push_back(shared_from_this());
    return;
  }
  if (status == FakeOpenAiServer::kDrop) {
    beast::error_code ignored;
    sock_.close(ignored);
    return;
  }
  if (status == FakeOpenAiServer::kDropMidStream) {
    drop_after_first_ = true;
  } else if (status != 0 && status != 200) {
    std::string extra;
    if (status == 429 && !impl_->options_.retry_after.empty()) {
      extra = StrCat("Retry-After: ", impl_->options_.retry_after, "\r\n");
    }
    return SendStatus(
        status, "application/json",
        json{{"error", {{"message", StrCat("injected status ", status)}, {"code", status}}}}.dump(),
        extra);
  }
  Generate(body, chat);
}

void Session::Generate(const json& req, bool chat) {
  const FakeOpenAiOptions& o = impl_->options_;
  {
    int64_t waiting = ++impl_->waiting_first_chunk_;
    std::atomic<int64_t>& max = impl_->max_waiting_first_chunk_;
    int64_t seen = max;
    while (waiting > seen && !max.compare_exchange_weak(seen, waiting)) {
    }
  }
  // The generated tokens: reasoning first, then content (repeated under ignore_eos).
  std::vector<std::pair<bool, std::string>> toks;  // (is_reasoning, text)
  for (const auto& t : o.reasoning) toks.emplace_back(true, t);
  int64_t max_tokens = req.value("max_tokens", int64_t{-1});
  bool ignore_eos = req.value("ignore_eos", false);
  size_t content_n = o.content.size();
  if (ignore_eos && max_tokens > 0) {
    content_n = static_cast<size_t>(std::max<int64_t>(0, max_tokens - toks.size()));
  }
  for (size_t i = 0; i < content_n && !o.content.empty(); ++i) {
    toks.emplace_back(false, o.content[i % o.content.size()]);
  }
  std::string finish = "stop";
  if (max_tokens >= 0 && static_cast<int64_t>(toks.size()) >= max_tokens) {
    if (static_cast<int64_t>(toks.size()) > max_tokens || ignore_eos) finish = "length";
    toks.resize(static_cast<size_t>(max_tokens));
  }
  int64_t prompt_tokens = 0;
  if (chat && req.contains("messages") && req["messages"].is_array()) {
    for (const auto& m : req["messages"]) {
      if (m.contains("content") && m["content"].is_string()) {
        prompt_tokens += CountWords(m["content"].get<std::string>());
      }
    }
  } else if (req.contains("prompt") && req["prompt"].is_string()) {
    prompt_tokens = CountWords(req["prompt"].get<std::string>());
  }
  int64_t n = static_cast<int64_t>(toks.size());
  int per = std::max(1, o.tokens_per_chunk);
  // Group into chunks, never mixing reasoning and content in one chunk.
  std::vector<std::pair<bool, std::string>> chunks;
  std::vector<int> chunk_tokens;
  for (size_t i = 0; i < toks.size();) {
    bool r = toks[i].first;
    std::string text;
    int k = 0;
    while (i < toks.size() && k < per && toks[i].first == r) {
      text += toks[i].second;
      ++i;
      ++k;
    }
    chunks.emplace_back(r, std::move(text));
    chunk_tokens.push_back(k);
  }
  int64_t rounds = static_cast<int64_t>(chunks.size());
  impl_->drafts_ += rounds;
  impl_->draft_tokens_ += rounds * o.num_spec_tokens;
  impl_->accepted_ += rounds * (per - 1);
  for (int p = 0; p < per - 1 && p < kMaxPos; ++p) impl_->per_pos_[p] += rounds;
  impl_->gen_tokens_ += n;
  impl_->prompt_tokens_ += prompt_tokens;
  ++impl_->completed_;

  json usage = {{"prompt_tokens", prompt_tokens},
                {"completion_tokens", n},
                {"total_tokens", prompt_tokens + n}};
  std::string model = req.value("model", std::string("fake-model"));
  const std::string& rfield = o.reasoning_field;
  bool stream = req.value("stream", false);
  if (!stream) {
    std::string content, reasoning;
    for (const auto& [r, t] : toks) (r ? reasoning : content) += t;
    json choice = {{"index", 0}, {"finish_reason", finish}};
    if (chat) {
      json msg = {{"role", "assistant"}, {"content", content}};
      if (!reasoning.empty()) msg[rfield] = reasoning;
      choice["message"] = msg;
    } else {
      choice["text"] = content;
    }
    json resp = {{"id", "cmpl-fake"},
                 {"object", chat ? "chat.completion" : "text_completion"},
                 {"model", model},
                 {"choices", json::array({choice})},
                 {"usage", usage}};
    return SendStatus(200, "application/json", resp.dump());
  }
  bool include_usage = false, continuous = false;
  if (req.contains("stream_options") && req["stream_options"].is_object()) {
    include_usage = req["stream_options"].value("include_usage", false);
    continuous = req["stream_options"].value("continuous_usage_stats", false);
  }
  const char* object = chat ? "chat.completion.chunk" : "text_completion";
  pending_.clear();
  next_ = 0;
  pending_.push_back(StrCat("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n",
                            "Transfer-Encoding: chunked\r\n",
                            keep_alive_ ? "" : "Connection: close\r\n", "\r\n"));
  int64_t so_far = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const auto& [r, text] = chunks[i];
    so_far += chunk_tokens[i];
    json choice = {{"index", 0}, {"finish_reason", nullptr}};
    if (chat) {
      json delta = json::object();
      if (i == 0) delta["role"] = "assistant";
      delta[r ? rfield : std::string("content")] = text;
      choice["delta"] = delta;
    } else {
      choice["text"] = text;
    }
    json ev = {{"id", "cmpl-fake"},
               {"object", object},
               {"model", model},
               {"choices", json::array({choice})}};
    if (continuous) {
      ev["usage"] = {{"prompt_tokens", prompt_tokens},
                     {"completion_tokens", so_far},
                     {"total_tokens", prompt_tokens + so_far}};
    }
    pending_.push_back(SseChunk(ev));
  }
  json last_choice = {{"index", 0}, {"finish_reason", finish}};
  if (chat) {
    last_choice["delta"] = json::object();
  } else {
    last_choice["text"] = "";
  }
  pending_.push_back(SseChunk({{"id", "cmpl-fake"},
                               {"object", object},
                               {"model", model},
                               {"choices", json::array({last_choice})}}));
  if (include_usage) {
    pending_.push_back(SseChunk({{"id", "cmpl-fake"},
                                 {"object", object},
                                 {"model", model},
                                 {"choices", json::array()},
                                 {"usage", usage}}));
  }
  pending_.push_back(Chunk("data: [DONE]\n\n") + "0\r\n\r\n");
  if (o.first_chunk_delay_us == 0 && o.chunk_interval_us == 0 && !drop_after_first_) {
    std::string all;
    for (auto& p : pending_) all += p;
    pending_.clear();
    --impl_->waiting_first_chunk_;
    return WriteThenRead(std::move(all));
  }
  StreamNext();
}

void Session::StreamNext() {
  if (next_ >= pending_.size()) {
    if (!keep_alive_) {
      beast::error_code ignored;
      sock_.shutdown(tcp::socket::shutdown_send, ignored);
      return;
    }
    return Read();
  }
  const FakeOpenAiOptions& o = impl_->options_;
  // pending_[0] is the header; pending_[1] the first chunk.
  int64_t delay_us = next_ == 0 ? 0 : next_ == 1 ? o.first_chunk_delay_us : o.chunk_interval_us;
  auto send = [self = shared_from_this()] {
    if (self->drop_after_first_ && self->next_ == 2) {
      beast::error_code ignored;
      self->sock_.close(ignored);
      return;
    }
    if (self->next_ == 1) --self->impl_->waiting_first_chunk_;
    self->out_ = std::move(self->pending_[self->next_++]);
    asio::async_write(self->sock_, asio::buffer(self->out_), [self](beast::error_code ec, size_t) {
      if (!ec) self->StreamNext();
    });
  };
  if (delay_us <= 0) return send();
  timer_.expires_after(std::chrono::microseconds(delay_us));
  timer_.async_wait([send](beast::error_code ec) {
    if (!ec) send();
  });
}

}  // namespace

void ServeConnection(tcp::socket sock, FakeOpenAiServer::Impl* impl) {
  std::make_shared<Session>(std::move(sock), impl)->Read();
}

}  // namespace longhaul::testing
