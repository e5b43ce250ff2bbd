#include "tests/http/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <cctype>

#include "core/strings.h"

namespace longhaul::testing {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

Status Connect(const std::string& addr, beast::tcp_stream* stream, int64_t timeout_ms) {
  size_t colon = addr.rfind(':');
  if (colon == std::string::npos) return absl::InvalidArgumentError("bad address " + addr);
  beast::error_code ec;
  auto ip = asio::ip::make_address(addr.substr(0, colon), ec);
  if (ec) return absl::InvalidArgumentError("bad address " + addr);
  stream->expires_after(std::chrono::milliseconds(timeout_ms));
  stream->connect(tcp::endpoint(ip, static_cast<unsigned short>(std::stoi(addr.substr(colon + 1)))),
                  ec);
  if (ec) return absl::UnavailableError(StrCat("connect ", addr, ": ", ec.message()));
  return OkStatus();
}

}  // namespace

std::string HttpResult::Header(const std::string& lower) const {
  auto it = headers.find(lower);
  return it == headers.end() ? "" : it->second;
}

Result<HttpResult> HttpRequest(const std::string& addr, const std::string& method,
                               const std::string& target, const std::string& body,
                               const std::map<std::string, std::string>& headers,
                               int64_t timeout_ms) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  RETURN_IF_ERROR(Connect(addr, &stream, timeout_ms));
  bhttp::request<bhttp::string_body> req(bhttp::string_to_verb(method), target, 11);
  req.set(bhttp::field::host, addr);
  for (const auto& [k, v] : headers) req.set(k, v);
  if (!body.empty() || method == "POST") {
    req.set(bhttp::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
  }
  beast::error_code ec;
  bhttp::write(stream, req, ec);
  if (ec) return absl::UnavailableError(StrCat(method, " ", target, ": write: ", ec.message()));
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(1ull << 31);
  bhttp::read(stream, buffer, parser, ec);
  if (ec) return absl::UnavailableError(StrCat(method, " ", target, ": read: ", ec.message()));
  HttpResult out;
  out.status = static_cast<int>(parser.get().result_int());
  for (const auto& f : parser.get()) {
    out.headers[Lower(std::string(f.name_string()))] = std::string(f.value());
  }
  out.body = std::move(parser.get().body());
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  return out;
}

struct SseClient::Impl {
  asio::io_context io;
  beast::tcp_stream stream{io};
};

SseClient::~SseClient() {
  if (impl_) {
    beast::error_code ec;
    impl_->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  }
}

Result<std::unique_ptr<SseClient>> SseClient::Open(const std::string& addr,
                                                   const std::string& target,
                                                   const std::string& last_event_id,
                                                   int64_t timeout_ms) {
  std::unique_ptr<SseClient> c(new SseClient());
  c->impl_ = std::make_unique<Impl>();
  RETURN_IF_ERROR(Connect(addr, &c->impl_->stream, timeout_ms));
  std::string req = StrCat("GET ", target, " HTTP/1.1\r\nHost: ", addr,
                           "\r\nAccept: text/event-stream\r\n");
  if (!last_event_id.empty()) req += StrCat("Last-Event-ID: ", last_event_id, "\r\n");
  req += "\r\n";
  beast::error_code ec;
  asio::write(c->impl_->stream, asio::buffer(req), ec);
  if (ec) return absl::UnavailableError("write: " + ec.message());
  // The head, up to the blank line.
  for (;;) {
    size_t end = c->buffer_.find("\r\n\r\n");
    if (end != std::string::npos) {
      std::string head = c->buffer_.substr(0, end);
      c->buffer_.erase(0, end + 4);
      c->status_ = std::stoi(head.substr(9, 3));
      if (c->status_ != 200) {
        // Read the (small) body that follows, for the message.
        char more[4096];
        size_t n = c->impl_->stream.read_some(asio::buffer(more), ec);
        c->buffer_.append(more, n);
        return absl::FailedPreconditionError(StrCat("status ", c->status_, ": ", c->buffer_));
      }
      return c;
    }
    char chunk[4096];
    c->impl_->stream.expires_after(std::chrono::milliseconds(timeout_ms));
    size_t n = c->impl_->stream.read_some(asio::buffer(chunk), ec);
    if (ec) return absl::UnavailableError("reading the response head: " + ec.message());
    c->buffer_.append(chunk, n);
  }
}

Result<SseEvent> SseClient::Next(int64_t timeout_ms) {
  for (;;) {
    size_t end = buffer_.find("\n\n");
    if (end != std::string::npos) {
      std::string block = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      SseEvent ev;
      ev.event = "message";
      bool any = false;
      for (const std::string& line : StrSplit(block, '\n')) {
        if (line.empty()) continue;
        if (line[0] == ':') {
          ++comments_;
          continue;
        }
        size_t colon = line.find(':');
        std::string field = line.substr(0, colon);
        std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
        if (!value.empty() && value[0] == ' ') value.erase(0, 1);
        any = true;
        if (field == "id") ev.id = value;
        if (field == "event") ev.event = value;
        if (field == "data") ev.data += value;
      }
      if (any) return ev;
      continue;
    }
    char chunk[65536];
    beast::error_code ec;
    impl_->stream.expires_after(std::chrono::milliseconds(timeout_ms));
    size_t n = impl_->stream.read_some(asio::buffer(chunk), ec);
    if (ec == asio::error::eof) return absl::OutOfRangeError("the server closed the stream");
    if (ec == beast::error::timeout) {
      return absl::DeadlineExceededError(StrCat("no event within ", timeout_ms, " ms"));
    }
    if (ec) return absl::UnavailableError("read: " + ec.message());
    buffer_.append(chunk, n);
  }
}

}  // namespace longhaul::testing
