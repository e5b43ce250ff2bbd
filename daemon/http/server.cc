#include "daemon/http/server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <cctype>
#include <deque>
#include <future>
#include <optional>
#include <thread>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/http/json.h"
#include "daemon/http/router.h"
#include "daemon/http/static_files.h"

namespace longhaul::http {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// A stream that sends more than this many unsent chunks is too slow: it is closed, and the
// browser reconnects with Last-Event-ID.
constexpr size_t kMaxQueuedChunks = 1024;

struct Shared {
  asio::io_context* io;
  asio::thread_pool* pool;
  Router* router;
  SseHub* hub;
  const HttpOptions* options;
};

class Session : public SseStream, public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Shared shared) : stream_(std::move(socket)), shared_(shared) {}

  void Read() {
    parser_.emplace();
    parser_->body_limit(shared_.options->max_body_bytes);
    stream_.expires_after(std::chrono::milliseconds(shared_.options->idle_timeout_ms));
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        self->OnRead(ec);
                      });
  }

  // --- SseStream ---
  void Begin() override {
    sse_ = true;
    stream_.expires_never();
    Send(std::make_shared<const std::string>(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        "X-Accel-Buffering: no\r\nConnection: close\r\n\r\n"));
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
  void OnRead(beast::error_code ec) {
    if (ec) {
      if (ec == bhttp::error::body_limit) {
        Write(ErrorResponse(413, absl::StatusCode::kInvalidArgument,
                            StrCat("request body over ", shared_.options->max_body_bytes,
                                   " bytes")),
              false);
        return;
      }
      Shutdown();
      return;
    }
    auto& msg = parser_->get();
    keep_alive_ = msg.keep_alive();
    Request req;
    req.method = std::string(msg.method_string());
    beast::error_code peer_ec;
    tcp::endpoint peer = stream_.socket().remote_endpoint(peer_ec);
    if (!peer_ec) req.peer = StrCat(peer.address().to_string(), ":", peer.port());
    for (const auto& field : msg) {
      std::string name(field.name_string());
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      req.headers[name] = std::string(field.value());
    }
    req.body = std::move(msg.body());
    if (Status s = ParseTarget(std::string(msg.target()), &req); !s.ok()) {
      Write(ErrorResponse(s), keep_alive_);
      return;
    }
    if (std::optional<Response> refused = shared_.router->Admit(req)) {
      Write(std::move(*refused), keep_alive_);
      return;
    }
    if (auto watch = Router::WatchTarget(req)) {
      if (!watch->ok()) {
        Write(ErrorResponse(watch->status()), keep_alive_);
        return;
      }
      shared_.hub->Open(shared_from_this(), **watch, req.Header("last-event-id"));
      return;
    }
    head_ = req.method == "HEAD";
    asio::post(*shared_.pool, [self = shared_from_this(), req = std::move(req)]() mutable {
      Response r = self->shared_.router->Handle(req);
      asio::post(*self->shared_.io, [self, r = std::move(r)]() mutable {
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
    size_t length = r.body.size();
    if (!head_) res->body() = std::move(r.body);
    res->keep_alive(keep_alive);
    res->content_length(length);
    bhttp::async_write(stream_, *res,
                       [self = shared_from_this(), res, keep_alive](beast::error_code ec, size_t) {
                         if (ec || !keep_alive) {
                           self->Shutdown();
                         } else {
                           self->Read();
                         }
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
    asio::async_write(stream_.socket(), asio::buffer(*chunk),
                      [self = shared_from_this(), chunk](beast::error_code ec, size_t) {
                        self->queue_.pop_front();
                        if (ec) {
                          self->Shutdown();
                          return;
                        }
                        self->WriteNext();
                      });
  }

  void WatchForClose() {
    stream_.socket().async_read_some(
        asio::buffer(discard_), [self = shared_from_this()](beast::error_code ec, size_t) {
          if (ec) {
            self->Shutdown();
            return;
          }
          self->WatchForClose();
        });
  }

  // The hub calls Send() and End() while it walks its streams; closing (which tells the hub)
  // waits for the next turn of the loop.
  void DeferShutdown() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] { self->Shutdown(); });
  }

  void Shutdown() {
    if (closed_) return;
    closed_ = true;
    queue_.clear();
    if (sse_) shared_.hub->Close(this);
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  Shared shared_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bool keep_alive_ = false;
  bool head_ = false;
  bool sse_ = false;
  bool writing_ = false;
  bool ending_ = false;
  bool closed_ = false;
  std::deque<std::shared_ptr<const std::string>> queue_;
  char discard_[512];
};

// "HOST:PORT", "[V6]:PORT" or ":PORT".
Result<tcp::endpoint> ParseListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(StrCat("--http '", listen, "': expected HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  std::string port = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || host == "localhost") host = "127.0.0.1";
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) {
    return absl::InvalidArgumentError(StrCat("--http '", listen, "': bad port '", port, "'"));
  }
  beast::error_code ec;
  asio::ip::address addr = asio::ip::make_address(host, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        StrCat("--http '", listen, "': '", host, "' is not an IP address"));
  }
  return tcp::endpoint(addr, static_cast<unsigned short>(p));
}

}  // namespace

struct HttpServer::Impl {
  rpc::ClientApi* api;
  HttpOptions options;
  AllowAll allow_all;
  const Authorizer* authorizer;
  asio::io_context io{1};
  asio::thread_pool pool;
  StaticFiles files;
  Router router;
  SseHub hub;
  tcp::acceptor acceptor{io};
  std::thread thread;
  bool started = false;
  bool stopped = false;

  Impl(rpc::ClientApi* a, HttpOptions o, const Authorizer* auth)
      : api(a),
        options(std::move(o)),
        authorizer(auth ? auth : &allow_all),
        pool(static_cast<size_t>(std::max(1, options.workers))),
        files(options.ui_dir),
        router(api, authorizer, &files),
        hub(&io, &pool, api, options.sse) {}

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec != asio::error::operation_aborted) Accept();
        return;
      }
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<Session>(std::move(socket), Shared{&io, &pool, &router, &hub, &options})
          ->Read();
      Accept();
    });
  }
};

HttpServer::HttpServer(rpc::ClientApi* api, HttpOptions options, const Authorizer* authorizer)
    : impl_(std::make_unique<Impl>(api, std::move(options), authorizer)) {}

HttpServer::~HttpServer() { Stop(); }

Result<std::string> HttpServer::Start() {
  Impl& m = *impl_;
  ASSIGN_OR_RETURN(tcp::endpoint ep, ParseListen(m.options.listen));
  beast::error_code ec;
  m.acceptor.open(ep.protocol(), ec);
  if (!ec) m.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) m.acceptor.bind(ep, ec);
  if (!ec) m.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        StrCat("cannot listen for HTTP on ", m.options.listen, ": ", ec.message()));
  }
  tcp::endpoint bound = m.acceptor.local_endpoint();
  std::string host = bound.address().to_string();
  if (bound.address().is_v6()) host = "[" + host + "]";
  if (bound.address().is_unspecified()) host = "127.0.0.1";
  m.hub.Start();
  m.Accept();
  m.started = true;
  m.thread = std::thread([&m] { m.io.run(); });
  return StrCat(host, ":", bound.port());
}

void HttpServer::Stop() {
  Impl& m = *impl_;
  if (!m.started || m.stopped) return;
  m.stopped = true;
  std::promise<void> closed;
  asio::post(m.io, [&m, &closed] {
    beast::error_code ec;
    m.acceptor.close(ec);
    m.hub.Stop();
    closed.set_value();
  });
  closed.get_future().wait();
  m.pool.join();  // workers finish their calls; their answers are posted to io
  m.io.stop();
  if (m.thread.joinable()) m.thread.join();
}

}  // namespace longhaul::http
