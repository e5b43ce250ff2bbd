#include "daemon/http/server.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <future>
#include <optional>
#include <thread>

#include "core/logging.h"
#include "core/net/listen_address.h"
#include "core/strings.h"
#include "daemon/http/host_check.h"
#include "daemon/http/router.h"
#include "daemon/http/session.h"
#include "daemon/http/static_files.h"

namespace longhaul::http {
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

// TLS 1.2 or later, with the coordinator's certificate chain and key (PEM text).
Result<std::unique_ptr<asio::ssl::context>> MakeTlsContext(const HttpOptions& o) {
  auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                   asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                   asio::ssl::context::no_tlsv1_1 | asio::ssl::context::no_compression |
                   asio::ssl::context::single_dh_use);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  beast::error_code ec;
  ctx->use_certificate_chain(asio::buffer(o.tls_cert_pem), ec);
  if (ec) {
    return absl::InvalidArgumentError(StrCat("HTTP TLS: --tls-cert: ", ec.message()));
  }
  ctx->use_private_key(asio::buffer(o.tls_key_pem), asio::ssl::context::pem, ec);
  if (ec) return absl::InvalidArgumentError(StrCat("HTTP TLS: --tls-key: ", ec.message()));
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return absl::InvalidArgumentError("HTTP TLS: --tls-key does not match --tls-cert");
  }
  return ctx;
}

// On the TLS port, looks at the first bytes: a TLS client hello gets a TLS session, anything
// else a plaintext one that explains (SessionMode::kPlainOnTlsPort).
class TlsDetector : public std::enable_shared_from_this<TlsDetector> {
 public:
  TlsDetector(beast::tcp_stream stream, asio::ssl::context* tls, SessionContext ctx,
              ConnectionSlot slot, SessionMode mode)
      : stream_(std::move(stream)), tls_(tls), ctx_(ctx), slot_(std::move(slot)), mode_(mode) {}

  void Run() {
    beast::async_detect_ssl(stream_, buffer_,
                            [self = shared_from_this()](beast::error_code ec, bool is_tls) {
                              if (ec) return;  // closed with the stream
                              self->OnDetect(is_tls);
                            });
  }

 private:
  void OnDetect(bool is_tls) {
    if (is_tls) {
      StartSession(beast::ssl_stream<beast::tcp_stream>(std::move(stream_), *tls_),
                   std::move(buffer_), ctx_, std::move(slot_), mode_);
    } else {
      StartSession(std::move(stream_), std::move(buffer_), ctx_, std::move(slot_),
                   SessionMode::kPlainOnTlsPort);
    }
  }

  beast::tcp_stream stream_;
  asio::ssl::context* tls_;
  beast::flat_buffer buffer_;
  SessionContext ctx_;
  ConnectionSlot slot_;
  SessionMode mode_;
};

}  // namespace

struct HttpServer::Impl {
  rpc::ClientApi* api;
  HttpOptions options;
  AllowAll allow_all;
  const RequestAuthorizer* authorizer;
  // Before io: sessions still queued in io when it is destroyed release their slot (and their
  // TLS state) as it goes.
  std::unique_ptr<asio::ssl::context> tls;  // null: plaintext
  std::optional<HostCheck> host_check;
  std::atomic<int> open_connections{0};
  asio::io_context io{1};
  asio::thread_pool pool;
  StaticFiles files;
  Router router;
  SseHub hub;
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  std::thread thread;
  bool started = false;
  bool stopped = false;

  Impl(rpc::ClientApi* a, HttpOptions o, const RequestAuthorizer* auth)
      : api(a),
        options(std::move(o)),
        authorizer(auth ? auth : &allow_all),
        pool(static_cast<size_t>(std::max(1, options.workers))),
        files(options.ui_dir),
        router(api, authorizer, &files),
        hub(&io, &pool, api, options.sse) {}

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) {
        // Out of descriptors, most likely: accepting again at once would spin.
        GetLogger("http")->warn("HTTP accept: {}; retrying in 100 ms", ec.message());
        accept_retry.expires_after(std::chrono::milliseconds(100));
        accept_retry.async_wait([this](beast::error_code e) {
          if (!e) Accept();
        });
        return;
      }
      OnAccept(std::move(socket));
      Accept();
    });
  }

  void OnAccept(tcp::socket socket) {
    int open = open_connections.load();
    SessionMode mode = SessionMode::kServe;
    if (open >= options.max_connections) {
      // Over the cap a connection is told so (503), up to a margin; past that it is closed.
      if (open >= options.max_connections + std::max(16, options.max_connections / 8)) return;
      mode = SessionMode::kOverCapacity;
    }
    beast::error_code ec;
    socket.set_option(tcp::no_delay(true), ec);
    beast::tcp_stream stream(std::move(socket));
    stream.expires_after(std::chrono::milliseconds(options.header_timeout_ms));
    SessionContext ctx{&io, &pool, &router, &hub, &options, &*host_check};
    ConnectionSlot slot(&open_connections);
    if (tls) {
      std::make_shared<TlsDetector>(std::move(stream), tls.get(), ctx, std::move(slot), mode)
          ->Run();
    } else {
      StartSession(std::move(stream), beast::flat_buffer(), ctx, std::move(slot), mode);
    }
  }
};

HttpServer::HttpServer(rpc::ClientApi* api, HttpOptions options,
                       const RequestAuthorizer* authorizer)
    : impl_(std::make_unique<Impl>(api, std::move(options), authorizer)) {}

HttpServer::~HttpServer() { Stop(); }

Result<std::string> HttpServer::Start() {
  Impl& m = *impl_;
  Result<tcp::endpoint> parsed = ParseListenAddress(m.options.listen);
  if (!parsed.ok()) return Annotate(parsed.status(), "--http");
  tcp::endpoint ep = *parsed;
  if (!m.options.tls_cert_pem.empty()) {
    ASSIGN_OR_RETURN(m.tls, MakeTlsContext(m.options));
  }
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
  ASSIGN_OR_RETURN(HostCheck check, HostCheck::Create(m.options.listen, bound.port(),
                                                      m.tls != nullptr, m.options.hosts));
  m.host_check = std::move(check);
  m.hub.Start();
  m.Accept();
  m.started = true;
  m.thread = std::thread([&m] { m.io.run(); });
  return DialableAddress(bound);
}

void HttpServer::Stop() {
  Impl& m = *impl_;
  if (!m.started || m.stopped) return;
  m.stopped = true;
  std::promise<void> closed;
  asio::post(m.io, [&m, &closed] {
    beast::error_code ec;
    m.acceptor.close(ec);
    m.accept_retry.cancel();
    m.hub.Stop();
    closed.set_value();
  });
  closed.get_future().wait();
  m.pool.join();  // workers finish their calls; their answers are posted to io
  m.io.stop();
  if (m.thread.joinable()) m.thread.join();
}

}  // namespace longhaul::http
