// A webhook endpoint for tests: a real HTTP/1.1 server (Boost.Beast) on 127.0.0.1, port 0,
// on a thread of its own, plaintext or (given a certificate and key) TLS. It answers the first
// `failures` requests 500, every later one 200, and keeps each request it received (answered
// either way). One request per connection; a TLS handshake that fails is no request.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace longhaul::testing {

class WebhookReceiver {
 public:
  struct Request {
    std::string target;
    std::string body;
    int answered = 0;  // the status it was answered
    std::string server_name;  // the TLS client's SNI ("" without TLS or without SNI)
  };

  explicit WebhookReceiver(int failures = 0);
  // Over TLS with this PEM certificate and key (e.g. deploy/gen-certs.sh's coordinator.crt,
  // which names localhost and 127.0.0.1).
  WebhookReceiver(int failures, const std::string& cert_file, const std::string& key_file);
  ~WebhookReceiver();

  // "http://127.0.0.1:PORT/hook", or with TLS "https://localhost:PORT/hook".
  std::string url() const;
  int port() const { return port_; }
  std::vector<Request> requests() const;
  // From now on the next `n` requests fail.
  void FailNext(int n);

 private:
  void Serve();
  // Reads one request from `stream` and answers it; false when no request came.
  template <typename Stream>
  bool Answer(Stream& stream, std::string server_name);

  std::unique_ptr<boost::asio::ssl::context> tls_;  // null: plaintext
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int port_ = 0;
  mutable std::mutex mu_;
  int failures_left_;
  std::vector<Request> requests_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace longhaul::testing
