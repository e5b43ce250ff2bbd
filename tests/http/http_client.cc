#include "tests/http/http_client.h"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <optional>

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

// A connection, plaintext or TLS; Visit() calls `f` with the stream to read and write.
struct Conn {
  asio::io_context io;
  beast::tcp_stream tcp{io};
  std::unique_ptr<asio::ssl::context> tls;
  std::optional<beast::ssl_stream<beast::tcp_stream>> ssl;

  beast::tcp_stream& Lowest() { return ssl ? beast::get_lowest_layer(*ssl) : tcp; }
  template <class F>
  auto Visit(F&& f) {
    return ssl ? f(*ssl) : f(tcp);
  }

  Status Open(const HttpEndpoint& to, int64_t timeout_ms) {
    RETURN_IF_ERROR(Connect(to.addr, &tcp, timeout_ms));
    if (to.ca_file.empty()) return OkStatus();
    tls = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    beast::error_code ec;
    tls->load_verify_file(to.ca_file, ec);
    if (ec) return absl::InvalidArgumentError(StrCat("CA ", to.ca_file, ": ", ec.message()));
    tls->set_verify_mode(asio::ssl::verify_peer);
    ssl.emplace(std::move(tcp), *tls);
    ssl->set_verify_callback(asio::ssl::host_name_verification(to.server_name));
    SSL_set_tlsext_host_name(ssl->native_handle(), to.server_name.c_str());
    ssl->handshake(asio::ssl::stream_base::client, ec);
    if (ec)
      return absl::UnavailableError(StrCat("TLS handshake with ", to.addr, ": ", ec.message()));
    return OkStatus();
  }
};

}  // namespace

std::string HttpResult::Header(const std::string& lower) const {
  auto it = headers.find(lower);
  return it == headers.end() ? "" : it->second;
}

Result<HttpResult> HttpRequest(const HttpEndpoint& to, const std::string& method,
                               const std::string& target, const std::string& body,
                               const std::map<std::string, std::string>& headers,
                               int64_t timeout_ms) {
  Conn conn;
  RETURN_IF_ERROR(conn.Open(to, timeout_ms));
  bhttp::request<bhttp::string_body> req(bhttp::string_to_verb(method), target, 11);
  req.set(bhttp::field::host, to.addr);
  for (const auto& [k, v] : headers) req.set(k, v);
  if (!body.empty() || method == "POST") {
    req.set(bhttp::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
  }
  beast::error_code ec;
  conn.Visit([&](auto& stream) { bhttp::write(stream, req, ec); });
  if (ec) return absl::UnavailableError(StrCat(method, " ", target, ": write: ", ec.message()));
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(1ull << 31);
  conn.Visit([&](auto& stream) { bhttp::read(stream, buffer, parser, ec); });
  if (ec) return absl::UnavailableError(StrCat(method, " ", target, ": read: ", ec.message()));
  HttpResult out;
  out.status = static_cast<int>(parser.get().result_int());
  for (const auto& f : parser.get()) {
    out.headers[Lower(std::string(f.name_string()))] = std::string(f.value());
  }
  out.body = std::move(parser.get().body());
  conn.Lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
  return out;
}

struct SseClient::Impl {
  Conn conn;
};

SseClient::~SseClient() {
  if (impl_) {
    beast::error_code ec;
    impl_->conn.Lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
  }
}

Result<size_t> SseClient::ReadSome(char* data, size_t size, int64_t timeout_ms) {
  beast::error_code ec;
  impl_->conn.Lowest().expires_after(std::chrono::milliseconds(timeout_ms));
  size_t n = impl_->conn.Visit(
      [&](auto& stream) { return stream.read_some(asio::buffer(data, size), ec); });
  if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
    return absl::OutOfRangeError("the server closed the stream");
  }
  if (ec == beast::error::timeout) {
    return absl::DeadlineExceededError(StrCat("no data within ", timeout_ms, " ms"));
  }
  if (ec) return absl::UnavailableError("read: " + ec.message());
  return n;
}

Result<std::unique_ptr<SseClient>> SseClient::Open(
    const HttpEndpoint& to, const std::string& target, const std::string& last_event_id,
    int64_t timeout_ms, const std::map<std::string, std::string>& headers) {
  std::unique_ptr<SseClient> c(new SseClient());
  c->impl_ = std::make_unique<Impl>();
  RETURN_IF_ERROR(c->impl_->conn.Open(to, timeout_ms));
  std::string req =
      StrCat("GET ", target, " HTTP/1.1\r\nHost: ", to.addr, "\r\nAccept: text/event-stream\r\n");
  if (!last_event_id.empty()) req += StrCat("Last-Event-ID: ", last_event_id, "\r\n");
  for (const auto& [k, v] : headers) req += StrCat(k, ": ", v, "\r\n");
  req += "\r\n";
  beast::error_code ec;
  c->impl_->conn.Visit([&](auto& stream) { asio::write(stream, asio::buffer(req), ec); });
  if (ec) return absl::UnavailableError("write: " + ec.message());
  // The head, up to the blank line.
  for (;;) {
    size_t end = c->buffer_.find("\r\n\r\n");
    if (end != std::string::npos) {
      std::string head = c->buffer_.substr(0, end);
      c->buffer_.erase(0, end + 4);
      c->status_ = std::stoi(head.substr(9, 3));
      for (const std::string& line : StrSplit(head, '\n')) {
        size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string value(StripWhitespace(line.substr(colon + 1)));
        c->headers_[Lower(line.substr(0, colon))] = value;
      }
      if (c->status_ != 200) {
        // Read the (small) body that follows, for the message.
        char more[4096];
        Result<size_t> n = c->ReadSome(more, sizeof more, timeout_ms);
        if (n.ok()) c->buffer_.append(more, *n);
        return absl::FailedPreconditionError(StrCat("status ", c->status_, ": ", c->buffer_));
      }
      return c;
    }
    char chunk[4096];
    Result<size_t> n = c->ReadSome(chunk, sizeof chunk, timeout_ms);
    if (!n.ok()) return Annotate(n.status(), "reading the response head");
    c->buffer_.append(chunk, *n);
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
    ASSIGN_OR_RETURN(size_t n, ReadSome(chunk, sizeof chunk, timeout_ms));
    buffer_.append(chunk, n);
  }
}

struct RawConnection::Impl {
  asio::io_context io;
  beast::tcp_stream stream{io};
};

RawConnection::~RawConnection() = default;

Result<std::unique_ptr<RawConnection>> RawConnection::Open(const std::string& addr,
                                                           int64_t timeout_ms) {
  std::unique_ptr<RawConnection> c(new RawConnection());
  c->impl_ = std::make_unique<Impl>();
  RETURN_IF_ERROR(Connect(addr, &c->impl_->stream, timeout_ms));
  return c;
}

Status RawConnection::Write(const std::string& bytes, int64_t timeout_ms) {
  beast::error_code ec;
  impl_->stream.expires_after(std::chrono::milliseconds(timeout_ms));
  asio::write(impl_->stream, asio::buffer(bytes), ec);
  if (ec) return absl::UnavailableError(StrCat("write: ", ec.message()));
  return OkStatus();
}

Result<std::string> RawConnection::ReadUntil(const std::string& marker, int64_t timeout_ms) {
  std::string out;
  impl_->stream.expires_after(std::chrono::milliseconds(timeout_ms));
  while (out.find(marker) == std::string::npos) {
    char chunk[4096];
    beast::error_code ec;
    size_t n = impl_->stream.read_some(asio::buffer(chunk), ec);
    out.append(chunk, n);
    if (ec) {
      return absl::UnavailableError(StrCat("read: ", ec.message(), " before '", marker,
                                           "'; read so far: '", out.substr(0, 200), "'"));
    }
  }
  return out;
}

Result<std::string> RawConnection::ReadUntilClose(int64_t timeout_ms) {
  std::string out;
  impl_->stream.expires_after(std::chrono::milliseconds(timeout_ms));
  for (;;) {
    char chunk[65536];
    beast::error_code ec;
    size_t n = impl_->stream.read_some(asio::buffer(chunk), ec);
    out.append(chunk, n);
    if (ec == asio::error::eof) return out;
    if (ec == beast::error::timeout) {
      return absl::DeadlineExceededError(
          StrCat("still open after ", timeout_ms, " ms; read so far: '", out.substr(0, 200), "'"));
    }
    if (ec) {
      return absl::UnavailableError(
          StrCat("read: ", ec.message(), "; read so far: '", out.substr(0, 200), "'"));
    }
  }
}

}  // namespace longhaul::testing
