#include "daemon/http/session.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <deque>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/ascii.h"
#include "core/strings.h"
#include "daemon/http/json.h"
#include "daemon/http/security_headers.h"
#include "daemon/http/server.h"

namespace longhaul::http {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// A stream that sends more than this many unsent chunks is too slow: it is closed, and the
// browser reconnects with Last-Event-ID.
constexpr size_t kMaxQueuedChunks = 1024;
// After an answer that ends the connection the request may not have been read to its end (a
// 413, a 431): what the client still sends is read and dropped for up to this long, so that it
// reads the answer instead of a reset.
constexpr int64_t kLingerMs = 5'000;

template <class Stream>
constexpr bool kIsTls = !std::is_same_v<Stream, beast::tcp_stream>;

template <class Stream>
class Session : public SseStream, public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, beast::flat_buffer buffer, SessionContext ctx, ConnectionSlot slot,
          SessionMode mode)
      : stream_(std::move(stream)),
        buffer_(std::move(buffer)),
        ctx_(ctx),
        slot_(std::move(slot)),
        mode_(mode) {}

  void Start() {
    if constexpr (kIsTls<Stream>) {
      // The accept-time deadline still runs: a client that never finishes the handshake is
      // closed like one that never finishes its header.
      stream_.async_handshake(asio::ssl::stream_base::server, buffer_.data(),
                              [self = this->shared_from_this()](beast::error_code ec, size_t used) {
                                if (ec) return self->Shutdown();
                                self->buffer_.consume(used);
                                self->Serve();
                              });
    } else {
      Serve();
    }
  }

  // --- SseStream ---
  void Begin() override {
    sse_ = true;
    Lowest().expires_never();
    std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n";
    for (const auto& [k, v] : SecurityHeaders(path_)) head += StrCat(k, ": ", v, "\r\n");
    head += "X-Accel-Buffering: no\r\nConnection: close\r\n\r\n";
    Send(std::make_shared<const std::string>(std::move(head)));
    // Notice the peer going away: a read ends with an error then.
    WatchForClose();
  }
  void Send(std::shared_ptr<const std::string> chunk) override {
    if (closed_ || ending_) return;
    if (queue_.size() >= kMaxQueuedChunks) {
      DeferShutdown();
      return;
    }
    queue_.push_back(std::move(chunk));
    if (!writing_) WriteNext();
  }
  void End() override {
    ending_ = true;
    if (!writing_) DeferShutdown();
  }
  void Refuse(Response response) override { Write(std::move(response), /*keep_alive=*/false); }

 private:
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }
  const HttpOptions& options() const { return *ctx_.options; }

  void Serve() {
    if (mode_ == SessionMode::kOverCapacity) {
      Write(ErrorResponse(503, absl::StatusCode::kUnavailable,
                          StrCat("too many open connections (", options().max_connections,
                                 ", --http-max-connections); try again later")),
            false);
      return;
    }
    ReadRequest(/*first=*/true);
  }

  // The first request's header must arrive by the deadline set at accept. Later ones may wait
  // idle_timeout_ms for their first byte, then have header_timeout_ms for the rest.
  void ReadRequest(bool first) {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(options().max_header_bytes));
    parser_->body_limit(options().max_body_bytes);
    path_.clear();
    head_ = false;
    if (first) return ReadHeader();
    if (buffer_.size() > 0) {
      Lowest().expires_after(std::chrono::milliseconds(options().header_timeout_ms));
      return ReadHeader();
    }
    Lowest().expires_after(std::chrono::milliseconds(options().idle_timeout_ms));
    stream_.async_read_some(buffer_.prepare(4096), [self = this->shared_from_this()](
                                                       beast::error_code ec, size_t n) {
      if (ec) return self->Shutdown();
      self->buffer_.commit(n);
      self->Lowest().expires_after(std::chrono::milliseconds(self->options().header_timeout_ms));
      self->ReadHeader();
    });
  }

  void ReadHeader() {
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  // An error while reading a request: answered when the client is owed an answer.
  void OnReadError(beast::error_code ec) {
    if (ec == bhttp::error::header_limit) {
      return Write(
          ErrorResponse(431, absl::StatusCode::kInvalidArgument,
                        StrCat("request header over ", options().max_header_bytes, " bytes")),
          false);
    }
    if (ec == bhttp::error::body_limit) {
      return Write(ErrorResponse(413, absl::StatusCode::kInvalidArgument,
                                 StrCat("request body over ", options().max_body_bytes, " bytes")),
                   false);
    }
    if (&ec.category() == &bhttp::make_error_code(bhttp::error::bad_target).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
      return Write(ErrorResponse(400, absl::StatusCode::kInvalidArgument,
                                 StrCat("malformed HTTP request: ", ec.message())),
                   false);
    }
    Shutdown();  // the peer went away, or the deadline passed
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    auto& msg = parser_->get();
    auto host = msg.find(bhttp::field::host);
    if (mode_ == SessionMode::kPlainOnTlsPort) {
      std::string url =
          StrCat("https://", host == msg.end() ? std::string("HOST") : std::string(host->value()),
                 std::string(msg.target()));
      return Write(ErrorResponse(400, absl::StatusCode::kFailedPrecondition,
                                 StrCat("a plaintext HTTP request on the HTTPS port: use ", url)),
                   false);
    }
    if (std::optional<Response> refused =
            ctx_.host_check->Check(host == msg.end() ? "" : std::string(host->value()),
                                   msg.version() >= 11, host != msg.end())) {
      return Write(std::move(*refused), false);
    }
    // The body gets the idle timeout: a slow upload is not a stalled header.
    Lowest().expires_after(std::chrono::milliseconds(options().idle_timeout_ms));
    if (parser_->is_done()) return OnRead({});
    auto read_body = [self = this->shared_from_this()] {
      bhttp::async_read(self->stream_, self->buffer_, *self->parser_,
                        [self](beast::error_code ec, size_t) { self->OnRead(ec); });
    };
    auto expect = msg.find(bhttp::field::expect);
    if (expect != msg.end() && beast::iequals(expect->value(), "100-continue")) {
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      asio::async_write(stream_, asio::buffer(kContinue),
                        [self = this->shared_from_this(), read_body](beast::error_code ec, size_t) {
                          if (ec) return self->Shutdown();
                          read_body();
                        });
      return;
    }
    read_body();
  }

  void OnRead(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    Lowest().expires_never();
    auto& msg = parser_->get();
    keep_alive_ = msg.keep_alive();
    Request req;
    req.method = std::string(msg.method_string());
    beast::error_code peer_ec;
    tcp::endpoint peer = Lowest().socket().remote_endpoint(peer_ec);
    if (!peer_ec) req.peer = StrCat(peer.address().to_string(), ":", peer.port());
    req.tls = kIsTls<Stream>;
    for (const auto& field : msg) {
      std::string name = absl::AsciiStrToLower(std::string(field.name_string()));
      req.headers[name] = std::string(field.value());
    }
    req.body = std::move(msg.body());
    if (Status s = ParseTarget(std::string(msg.target()), &req); !s.ok()) {
      return Write(ErrorResponse(s), keep_alive_);
    }
    path_ = req.path;
    if (std::optional<Response> refused = ctx_.router->Admit(req)) {
      return Write(std::move(*refused), keep_alive_);
    }
    if (auto watch = Router::WatchTarget(req)) {
      if (!watch->ok()) return Write(ErrorResponse(watch->status()), keep_alive_);
      ctx_.hub->Open(this->shared_from_this(), **watch, req.Header("last-event-id"));
      return;
    }
    head_ = req.method == "HEAD";
    asio::post(*ctx_.pool, [self = this->shared_from_this(), req = std::move(req)]() mutable {
      Response r = self->ctx_.router->Handle(req);
      asio::post(*self->ctx_.io, [self, r = std::move(r)]() mutable {
        self->Write(std::move(r), self->keep_alive_);
      });
    });
  }

  void Write(Response r, bool keep_alive) {
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>();
    res->version(11);
    res->result(static_cast<unsigned>(r.status));
    res->set(bhttp::field::server, "longhauld");
    if (!r.content_type.empty()) res->set(bhttp::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) res->set(k, v);
    for (auto& [k, v] : SecurityHeaders(path_)) res->set(k, v);
    size_t length = r.body.size();
    if (!head_) res->body() = std::move(r.body);
    res->keep_alive(keep_alive);
    res->content_length(length);
    // A slow reader of the answer is bounded like a slow writer of the request.
    Lowest().expires_after(std::chrono::milliseconds(options().idle_timeout_ms));
    bhttp::async_write(
        stream_, *res,
        [self = this->shared_from_this(), res, keep_alive](beast::error_code ec, size_t) {
          if (ec) return self->Shutdown();
          if (!keep_alive) return self->LingerClose();
          self->ReadRequest(/*first=*/false);
        });
  }

  void WriteNext() {
    if (queue_.empty()) {
      writing_ = false;
      if (ending_) Shutdown();
      return;
    }
    writing_ = true;
    std::shared_ptr<const std::string> chunk = queue_.front();
    asio::async_write(stream_, asio::buffer(*chunk),
                      [self = this->shared_from_this(), chunk](beast::error_code ec, size_t) {
                        // Shutdown() (the peer went away while this write was pending)
                        // emptied the queue: nothing is left to pop or to write.
                        if (self->closed_) return;
                        self->queue_.pop_front();
                        if (ec) return self->Shutdown();
                        self->WriteNext();
                      });
  }

  void WatchForClose() {
    stream_.async_read_some(asio::buffer(discard_),
                            [self = this->shared_from_this()](beast::error_code ec, size_t) {
                              if (ec) return self->Shutdown();
                              self->WatchForClose();
                            });
  }

  // Sends FIN, then drops what the client still sends until it closes or kLingerMs pass.
  void LingerClose() {
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return Shutdown();
    Lowest().expires_after(std::chrono::milliseconds(kLingerMs));
    Drain(std::make_shared<std::vector<char>>(64 << 10));
  }
  void Drain(std::shared_ptr<std::vector<char>> sink) {
    Lowest().async_read_some(asio::buffer(*sink),
                             [self = this->shared_from_this(), sink](beast::error_code ec, size_t) {
                               if (ec) return self->Shutdown();
                               self->Drain(sink);
                             });
  }

  // The hub calls Send() and End() while it walks its streams; closing (which tells the hub)
  // waits for the next turn of the loop.
  void DeferShutdown() {
    asio::post(*ctx_.io, [self = this->shared_from_this()] { self->Shutdown(); });
  }

  void Shutdown() {
    if (closed_) return;
    closed_ = true;
    queue_.clear();
    if (sse_) ctx_.hub->Close(this);
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    Lowest().socket().close(ec);
  }

  Stream stream_;
  beast::flat_buffer buffer_;
  SessionContext ctx_;
  ConnectionSlot slot_;
  SessionMode mode_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::string path_;  // of the request being answered; "" before it is parsed
  bool keep_alive_ = false;
  bool head_ = false;
  bool sse_ = false;
  bool writing_ = false;
  bool ending_ = false;
  bool closed_ = false;
  std::deque<std::shared_ptr<const std::string>> queue_;
  char discard_[512];
};

}  // namespace

template <class Stream>
void StartSession(Stream stream, beast::flat_buffer read_ahead, SessionContext context,
                  ConnectionSlot slot, SessionMode mode) {
  std::make_shared<Session<Stream>>(std::move(stream), std::move(read_ahead), context,
                                    std::move(slot), mode)
      ->Start();
}

template void StartSession<beast::tcp_stream>(beast::tcp_stream, beast::flat_buffer, SessionContext,
                                              ConnectionSlot, SessionMode);
template void StartSession<beast::ssl_stream<beast::tcp_stream>>(
    beast::ssl_stream<beast::tcp_stream>, beast::flat_buffer, SessionContext, ConnectionSlot,
    SessionMode);

}  // namespace longhaul::http
