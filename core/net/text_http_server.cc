#include "core/net/text_http_server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <thread>

#include "core/net/listen_address.h"
#include "core/strings.h"

namespace longhaul {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kHeaderTimeout = std::chrono::seconds(10);
constexpr uint32_t kMaxHeaderBytes = 8 * 1024;
constexpr int kMaxConnections = 64;

using Handlers = std::map<std::string, TextHttpServer::Handler>;

// One connection: read one request, answer it, close.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, const Handlers* handlers, int* open)
      : stream_(std::move(socket)), handlers_(handlers), open_(open) {
    ++*open_;
  }
  ~Connection() { --*open_; }

  void Run() {
    parser_.header_limit(kMaxHeaderBytes);
    parser_.body_limit(0);
    stream_.expires_after(kHeaderTimeout);
    bhttp::async_read(
        stream_, buffer_, parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec == bhttp::error::body_limit || ec == bhttp::error::unexpected_body) {
      return Answer({400, "text/plain; charset=utf-8", "a request here has no body\n"}, false);
    }
    if (ec) return;  // timed out, closed, or not HTTP: nothing to answer
    const auto& req = parser_.get();
    bool head = req.method() == bhttp::verb::head;
    if (req.method() != bhttp::verb::get && !head) {
      return Answer({405, "text/plain; charset=utf-8", "only GET and HEAD\n"}, false);
    }
    std::string path(req.target());
    if (size_t q = path.find('?'); q != std::string::npos) path.resize(q);
    auto it = handlers_->find(path);
    if (it == handlers_->end()) {
      return Answer({404, "text/plain; charset=utf-8", StrCat("no ", path, " here\n")}, head);
    }
    Answer(it->second(), head);
  }

  void Answer(TextResponse r, bool head) {
    res_.result(static_cast<unsigned>(r.status));
    res_.version(11);
    res_.set(bhttp::field::content_type, r.content_type);
    if (r.status == 405) res_.set(bhttp::field::allow, "GET, HEAD");
    res_.keep_alive(false);
    res_.content_length(r.body.size());
    if (!head) res_.body() = std::move(r.body);
    stream_.expires_after(kHeaderTimeout);
    bhttp::async_write(stream_, res_, [self = shared_from_this()](beast::error_code, size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  bhttp::request_parser<bhttp::empty_body> parser_;
  bhttp::response<bhttp::string_body> res_;
  const Handlers* handlers_;
  int* open_;
};

}  // namespace

struct TextHttpServer::Impl {
  Handlers handlers;
  int open = 0;  // connections; on the io thread only. Before io: its connections count down
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  std::thread thread;
  bool started = false;
  bool stopped = false;

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) {
        // Out of descriptors, most likely: accepting again at once would spin.
        accept_retry.expires_after(std::chrono::milliseconds(100));
        accept_retry.async_wait([this](beast::error_code e) {
          if (!e) Accept();
        });
        return;
      }
      if (open < kMaxConnections) {
        std::make_shared<Connection>(std::move(socket), &handlers, &open)->Run();
      }
      Accept();
    });
  }
};

TextHttpServer::TextHttpServer() : impl_(std::make_unique<Impl>()) {}

TextHttpServer::~TextHttpServer() { Stop(); }

void TextHttpServer::Handle(const std::string& path, Handler handler) {
  impl_->handlers[path] = std::move(handler);
}

Result<std::string> TextHttpServer::Start(const std::string& listen) {
  Impl& m = *impl_;
  ASSIGN_OR_RETURN(tcp::endpoint ep, ParseListenAddress(listen));
  beast::error_code ec;
  m.acceptor.open(ep.protocol(), ec);
  if (!ec) m.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) m.acceptor.bind(ep, ec);
  if (!ec) m.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return absl::UnavailableError(StrCat("cannot listen on ", listen, ": ", ec.message()));
  std::string bound = DialableAddress(m.acceptor.local_endpoint());
  m.Accept();
  m.started = true;
  m.thread = std::thread([&m] { m.io.run(); });
  return bound;
}

void TextHttpServer::Stop() {
  Impl& m = *impl_;
  if (!m.started || m.stopped) return;
  m.stopped = true;
  m.io.stop();  // run() returns; what is pending never runs, and goes with io
  if (m.thread.joinable()) m.thread.join();
  beast::error_code ec;
  m.acceptor.close(ec);  // no thread runs io any more
}

}  // namespace longhaul
