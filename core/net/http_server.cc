#include "core/net/http_server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdio>
#include <deque>
#include <optional>

#include "core/net/listen_address.h"
#include "core/strings.h"

namespace longhaul::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

std::string HttpServerStatusLine(int status, bool http10) {
  auto reason = http::obsolete_reason(static_cast<http::status>(status));
  return StrCat(http10 ? "HTTP/1.0 " : "HTTP/1.1 ", status, " ",
                std::string(reason.data(), reason.size()), "\r\n");
}

std::string HttpServerHex(size_t n) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%zx", n);
  return buf;
}

// What the connections share with the server, which may be gone before they are.
struct ServerShared {
  HttpServer::Handler handler;
  HttpServer::Options options;
  int open = 0;  // connections
};

class Session;

class Responder : public HttpResponder {
 public:
  Responder(std::shared_ptr<Session> session, bool keep_alive, bool http10, bool head)
      : session_(std::move(session)), keep_alive_(keep_alive), http10_(http10), head_(head) {}
  void Send(int status, std::string_view content_type, std::string body,
            const Headers& headers) override;
  void StartStream(int status, std::string_view content_type) override;
  void Write(std::string data) override;
  void End() override;
  bool started() const override { return started_; }
  bool closed() const override;
  void OnClose(std::function<void()> fn) override { on_close_ = std::move(fn); }

  void NotifyClosed() {
    if (done_) return;
    done_ = true;
    if (on_close_) std::exchange(on_close_, nullptr)();
  }

 private:
  std::shared_ptr<Session> session_;
  bool keep_alive_;
  bool http10_;
  bool head_;
  bool started_ = false;
  bool done_ = false;
  std::function<void()> on_close_;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<ServerShared> shared)
      : socket_(std::move(socket)),
        shared_(std::move(shared)),
        read_timer_(socket_.get_executor()) {
    ++shared_->open;
    // The close watch peeks without blocking.
    beast::error_code ignored;
    socket_.non_blocking(true, ignored);
  }
  ~Session() { --shared_->open; }

  void Start() { Read(); }

  void Enqueue(std::string data) {
    if (closed_) return;
    out_.push_back(std::move(data));
    if (!writing_) DoWrite();
  }
  // The current response is complete: after its bytes are out, read the next request or
  // close.
  void ResponseDone(bool keep_alive) {
    response_done_ = true;
    keep_alive_ = keep_alive;
    current_.reset();
    if (!writing_) AfterWrites();
  }
  bool closed() const { return closed_; }

 private:
  const HttpServer::Options& options() const { return shared_->options; }

  void Read() {
    parser_.emplace();
    parser_->header_limit(options().header_limit);
    parser_->body_limit(options().body_limit);
    if (options().header_timeout.count() > 0) {
      read_timer_.expires_after(options().header_timeout);
      read_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
        if (!ec) self->Close();  // the read fails and finds the session closed
      });
    }
    http::async_read(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    read_timer_.cancel();
    if (closed_) return;
    if (ec) {
      if (ec == http::error::end_of_stream || ec == asio::error::operation_aborted ||
          ec == asio::error::connection_reset || ec == asio::error::eof ||
          ec == http::error::header_limit) {
        Close();  // gone, or a header too large to be worth an answer
        return;
      }
      // A malformed request, or a body too large, gets a 400 before the connection closes.
      BadRequestAnswer a = options().bad_request
                               ? options().bad_request(ec.message())
                               : BadRequestAnswer{"text/plain; charset=utf-8",
                                                  StrCat("bad HTTP request: ", ec.message(), "\n")};
      Enqueue(StrCat(HttpServerStatusLine(400, false), "Content-Type: ", a.content_type,
                     "\r\nContent-Length: ", a.body.size(), "\r\nConnection: close\r\n\r\n",
                     a.body));
      response_done_ = true;
      keep_alive_ = false;
      return;
    }
    http::request<http::string_body> req = parser_->release();
    ServerRequest r;
    r.method = std::string(req.method_string());
    std::string target(req.target());
    size_t q = target.find('?');
    r.path = target.substr(0, q);
    if (q != std::string::npos) r.query = target.substr(q + 1);
    r.body = std::move(req.body());
    response_done_ = false;
    bool http10 = req.version() < 11;
    bool keep_alive = options().keep_alive && req.keep_alive() && !http10;
    current_ = std::make_shared<Responder>(shared_from_this(), keep_alive, http10,
                                           req.method() == http::verb::head);
    WatchForClose();
    shared_->handler(std::move(r), current_);
  }

  // While a request is being answered nobody reads the socket; wait for readability to learn
  // that the client went away (EOF), so that its work can be cancelled.
  void WatchForClose() {
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_ || self->response_done_) return;
      char byte;
      beast::error_code peek_ec;
      size_t n = self->socket_.receive(asio::buffer(&byte, 1), tcp::socket::message_peek, peek_ec);
      if (peek_ec == asio::error::would_block) {
        self->WatchForClose();
      } else if (peek_ec || n == 0) {
        self->Close();
      }
      // Pipelined bytes: read after this response.
    });
  }

  // Everything queued goes out in one gathered write: a step's chunks for one connection,
  // or a response's head and body, cost one system call.
  void DoWrite() {
    writing_ = true;
    in_flight_ = out_.size();
    buffers_.clear();
    for (const std::string& s : out_) buffers_.push_back(asio::buffer(s));
    asio::async_write(socket_, buffers_, [self = shared_from_this()](beast::error_code ec, size_t) {
      self->OnWrite(ec);
    });
  }

  void OnWrite(beast::error_code ec) {
    writing_ = false;
    if (ec) {
      Close();
      return;
    }
    out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(in_flight_));
    if (!out_.empty()) {
      DoWrite();
      return;
    }
    if (response_done_) AfterWrites();
  }

  void AfterWrites() {
    if (closed_) return;
    if (!keep_alive_) {
      beast::error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_send, ignored);
      Close();
      return;
    }
    socket_.cancel();  // the close watch
    Read();
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ignored;
    socket_.close(ignored);
    read_timer_.cancel();
    out_.clear();
    if (auto r = std::exchange(current_, nullptr)) r->NotifyClosed();
  }

  tcp::socket socket_;
  std::shared_ptr<ServerShared> shared_;
  asio::steady_timer read_timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::deque<std::string> out_;
  std::vector<asio::const_buffer> buffers_;
  size_t in_flight_ = 0;
  bool writing_ = false;
  bool response_done_ = false;
  bool keep_alive_ = true;
  bool closed_ = false;
  std::shared_ptr<Responder> current_;
};

bool Responder::closed() const { return done_ || session_->closed(); }

void Responder::Send(int status, std::string_view content_type, std::string body,
                     const Headers& headers) {
  if (closed() || started_) return;
  started_ = true;
  done_ = true;
  std::string out = StrCat(HttpServerStatusLine(status, http10_), "Content-Type: ", content_type,
                           "\r\nContent-Length: ", body.size(), "\r\n");
  for (const auto& [name, value] : headers) out += StrCat(name, ": ", value, "\r\n");
  out += StrCat("Connection: ", keep_alive_ ? "keep-alive" : "close", "\r\n\r\n");
  if (!head_) out += body;
  session_->Enqueue(std::move(out));
  session_->ResponseDone(keep_alive_);
}

void Responder::StartStream(int status, std::string_view content_type) {
  if (closed() || started_) return;
  started_ = true;
  // HTTP/1.0 has no chunked encoding: the body runs to the end of the connection.
  session_->Enqueue(StrCat(HttpServerStatusLine(status, http10_), "Content-Type: ", content_type,
                           "\r\nCache-Control: no-cache\r\n",
                           http10_ ? "Connection: close\r\n"
                                   : (keep_alive_ ? "Transfer-Encoding: chunked\r\nConnection: "
                                                    "keep-alive\r\n"
                                                  : "Transfer-Encoding: chunked\r\nConnection: "
                                                    "close\r\n"),
                           "\r\n"));
}

void Responder::Write(std::string data) {
  if (closed() || !started_ || data.empty() || head_) return;
  if (http10_) {
    session_->Enqueue(std::move(data));
    return;
  }
  session_->Enqueue(StrCat(HttpServerHex(data.size()), "\r\n", data, "\r\n"));
}

void Responder::End() {
  if (closed() || !started_) return;
  done_ = true;
  if (!http10_ && !head_) session_->Enqueue("0\r\n\r\n");
  session_->ResponseDone(keep_alive_ && !http10_);
}

}  // namespace

class HttpServer::Impl : public std::enable_shared_from_this<HttpServer::Impl> {
 public:
  Impl(asio::io_context& io, Handler handler, Options options)
      : io_(io),
        shared_(std::make_shared<ServerShared>(
            ServerShared{std::move(handler), std::move(options), 0})),
        acceptor_(io),
        accept_retry_(io) {}

  Result<tcp::endpoint> Bind(const tcp::endpoint& ep, const std::string& where) {
    beast::error_code ec;
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return absl::UnavailableError(StrCat("cannot listen on ", where, ": ", ec.message()));
    tcp::endpoint bound = acceptor_.local_endpoint(ec);
    Accept();
    return bound;
  }

  Result<int> Listen(const std::string& host, int port) {
    beast::error_code ec;
    tcp::resolver resolver(io_);
    auto results = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
    if (ec || results.empty()) {
      return absl::InvalidArgumentError(StrCat("cannot resolve host '", host, "': ", ec.message()));
    }
    ASSIGN_OR_RETURN(tcp::endpoint bound,
                     Bind(results.begin()->endpoint(), StrCat(host, ":", port)));
    return static_cast<int>(bound.port());
  }

  void Stop() {
    beast::error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
  }

 private:
  void Accept() {
    acceptor_.async_accept([self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) return;
      if (ec) {
        // Out of descriptors, most likely: accepting again at once would spin.
        self->accept_retry_.expires_after(std::chrono::milliseconds(100));
        self->accept_retry_.async_wait([self](beast::error_code e) {
          if (!e && self->acceptor_.is_open()) self->Accept();
        });
        return;
      }
      int cap = self->shared_->options.max_connections;
      if (cap <= 0 || self->shared_->open < cap) {
        beast::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        std::make_shared<Session>(std::move(socket), self->shared_)->Start();
      }  // else the socket closes here
      self->Accept();
    });
  }

  asio::io_context& io_;
  std::shared_ptr<ServerShared> shared_;
  tcp::acceptor acceptor_;
  asio::steady_timer accept_retry_;

  friend class HttpServer;
};

HttpServer::HttpServer(asio::io_context& io, Handler handler, Options options)
    : impl_(std::make_shared<Impl>(io, std::move(handler), std::move(options))) {}

HttpServer::~HttpServer() { impl_->Stop(); }

Result<int> HttpServer::Listen(const std::string& host, int port) {
  return impl_->Listen(host, port);
}

Result<std::string> HttpServer::Listen(const std::string& listen) {
  ASSIGN_OR_RETURN(tcp::endpoint ep, ParseListenAddress(listen));
  ASSIGN_OR_RETURN(tcp::endpoint bound, impl_->Bind(ep, listen));
  return DialableAddress(bound);
}

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace longhaul::net
