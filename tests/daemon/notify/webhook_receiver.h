// A webhook endpoint for tests: a real HTTP/1.1 server (Boost.Beast) on 127.0.0.1, port 0,
// on a thread of its own. It answers the first `failures` requests 500, every later one 200,
// and keeps each request it received (answered either way). One request per connection.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
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
  };

  explicit WebhookReceiver(int failures = 0);
  ~WebhookReceiver();

  // "http://127.0.0.1:PORT/hook".
  std::string url() const;
  int port() const { return port_; }
  std::vector<Request> requests() const;
  // From now on the next `n` requests fail.
  void FailNext(int n);

 private:
  void Serve();

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
