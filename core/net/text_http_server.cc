#include "core/net/text_http_server.h"

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>
#include <thread>

#include "core/net/http_server.h"
#include "core/strings.h"

namespace longhaul {

struct TextHttpServer::Impl {
  std::map<std::string, Handler> handlers;
  boost::asio::io_context io{1};
  std::optional<net::HttpServer> server;  // destroyed before `io`
  std::thread thread;
  bool started = false;
  bool stopped = false;

  void Answer(const net::ServerRequest& req, net::HttpResponder& resp) {
    constexpr std::string_view kText = "text/plain; charset=utf-8";
    if (req.method != "GET" && req.method != "HEAD") {
      return resp.Send(405, kText, "only GET and HEAD\n", {{"Allow", "GET, HEAD"}});
    }
    auto it = handlers.find(req.path);
    if (it == handlers.end()) return resp.Send(404, kText, StrCat("no ", req.path, " here\n"));
    TextResponse r = it->second();
    resp.Send(r.status, r.content_type, std::move(r.body));
  }
};

TextHttpServer::TextHttpServer() : impl_(std::make_unique<Impl>()) {}

TextHttpServer::~TextHttpServer() { Stop(); }

void TextHttpServer::Handle(const std::string& path, Handler handler) {
  impl_->handlers[path] = std::move(handler);
}

Result<std::string> TextHttpServer::Start(const std::string& listen) {
  Impl& m = *impl_;
  net::HttpServer::Options options;
  options.header_limit = 8 * 1024;
  options.header_timeout = std::chrono::seconds(10);
  options.body_limit = 0;
  options.max_connections = 64;
  options.keep_alive = false;
  m.server.emplace(
      m.io,
      [&m](net::ServerRequest req, std::shared_ptr<net::HttpResponder> resp) {
        m.Answer(req, *resp);
      },
      std::move(options));
  ASSIGN_OR_RETURN(std::string bound, m.server->Listen(listen));
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
  m.server.reset();  // closes the listener; no thread runs io any more
}

}  // namespace longhaul
