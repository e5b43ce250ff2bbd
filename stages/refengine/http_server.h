// A small asynchronous HTTP/1.1 server on Boost.Beast for the refengine: one io_context
// thread, no thread per connection or request, keep-alive, whole and streamed (chunked)
// responses. Beast parses requests; responses are written as plain bytes.
//
// Threading: everything runs on the io_context the server was given; the handler and every
// HttpResponder call must happen on that thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace boost::asio {
class io_context;
}

namespace longhaul::refengine {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query
  std::string query;
  std::string body;
};

// Answers one request. Either Send() once, or StartStream(), any number of Write(), End().
class HttpResponder {
 public:
  virtual ~HttpResponder() = default;
  virtual void Send(int status, std::string_view content_type, std::string body) = 0;
  virtual void StartStream(int status, std::string_view content_type) = 0;
  virtual void Write(std::string data) = 0;
  virtual void End() = 0;
  virtual bool started() const = 0;
  // True once the client is gone; later calls do nothing.
  virtual bool closed() const = 0;
  // `fn` runs once if the connection closes before the response is complete.
  virtual void OnClose(std::function<void()> fn) = 0;
};

class HttpServer {
 public:
  using Handler = std::function<void(HttpRequest, std::shared_ptr<HttpResponder>)>;

  HttpServer(boost::asio::io_context& io, Handler handler);
  ~HttpServer();

  // Binds host:port (0 = any free port) and starts accepting; returns the bound port.
  Result<int> Listen(const std::string& host, int port);
  // Stops accepting; open connections end with the io_context.
  void Stop();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace longhaul::refengine
