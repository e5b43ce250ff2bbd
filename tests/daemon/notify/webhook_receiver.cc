#include "tests/daemon/notify/webhook_receiver.h"

#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace longhaul::testing {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;

WebhookReceiver::WebhookReceiver(int failures)
    : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
      failures_left_(failures) {
  port_ = acceptor_.local_endpoint().port();
  thread_ = std::thread([this] { Serve(); });
}

WebhookReceiver::WebhookReceiver(int failures, const std::string& cert_file,
                                 const std::string& key_file)
    : tls_(std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server)),
      acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
      failures_left_(failures) {
  tls_->use_certificate_chain_file(cert_file);
  tls_->use_private_key_file(key_file, asio::ssl::context::pem);
  port_ = acceptor_.local_endpoint().port();
  thread_ = std::thread([this] { Serve(); });
}

WebhookReceiver::~WebhookReceiver() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  // Wake the blocking accept with a connection of our own.
  boost::system::error_code ec;
  asio::io_context io;
  tcp::socket s(io);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
  thread_.join();
}

std::string WebhookReceiver::url() const {
  if (tls_) return "https://localhost:" + std::to_string(port_) + "/hook";
  return "http://127.0.0.1:" + std::to_string(port_) + "/hook";
}

std::vector<WebhookReceiver::Request> WebhookReceiver::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void WebhookReceiver::FailNext(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_left_ = n;
}

void WebhookReceiver::Serve() {
  for (;;) {
    tcp::socket socket(io_);
    boost::system::error_code ec;
    acceptor_.accept(socket, ec);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    if (ec) continue;
    if (!tls_) {
      Answer(socket, "");
      socket.shutdown(tcp::socket::shutdown_both, ec);
      continue;
    }
    asio::ssl::stream<tcp::socket> stream(std::move(socket), *tls_);
    stream.handshake(asio::ssl::stream_base::server, ec);
    if (ec) continue;
    const char* sni = SSL_get_servername(stream.native_handle(), TLSEXT_NAMETYPE_host_name);
    Answer(stream, sni ? sni : "");
    stream.shutdown(ec);
  }
}

template <typename Stream>
bool WebhookReceiver::Answer(Stream& stream, std::string server_name) {
  boost::system::error_code ec;
  boost::beast::flat_buffer buffer;
  http::request<http::string_body> req;
  http::read(stream, buffer, req, ec);
  if (ec) return false;
  Request seen{std::string(req.target()), req.body(), 200, std::move(server_name)};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failures_left_ > 0) {
      --failures_left_;
      seen.answered = 500;
    }
    requests_.push_back(seen);
  }
  http::response<http::string_body> res{
      seen.answered == 200 ? http::status::ok : http::status::internal_server_error,
      req.version()};
  res.set(http::field::content_type, "text/plain");
  res.body() = seen.answered == 200 ? "ok" : "try later";
  res.keep_alive(false);
  res.prepare_payload();
  http::write(stream, res, ec);
  return true;
}

}  // namespace longhaul::testing
