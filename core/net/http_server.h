// A small asynchronous HTTP/1.1 server on Boost.Beast, the one listener longhaul's programs
// build on apart from longhauld's API server (daemon/http/): lh-refengine's OpenAI API and,
// through TextHttpServer, the agent's /metrics. One io_context thread, no thread per
// connection or request; keep-alive; whole and streamed (chunked) responses. Beast parses
// requests; responses are written as plain bytes. A HEAD request is answered with the head its
// GET would get (Content-Length included) and no body.
//
// Limits (Options): the request header's size and the time to receive it, the body's size,
// the open connections. A header too large or too slow closes the connection without an
// answer; a body too large or a malformed request gets a 400 (Options::bad_request words it)
// and the connection closes.
//
// Threading: everything runs on the io_context the server was given; the handler and every
// HttpResponder call must happen on that thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace boost::asio {
class io_context;
}

namespace longhaul::net {

struct ServerRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query
  std::string query;
  std::string body;
};

// Answers one request. Either Send() once, or StartStream(), any number of Write(), End().
class HttpResponder {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;
  virtual ~HttpResponder() = default;
  // `headers`: extra header lines; names and values must not contain CR or LF.
  virtual void Send(int status, std::string_view content_type, std::string body,
                    const Headers& headers = {}) = 0;
  virtual void StartStream(int status, std::string_view content_type) = 0;
  virtual void Write(std::string data) = 0;
  virtual void End() = 0;
  virtual bool started() const = 0;
  // True once the client is gone; later calls do nothing.
  virtual bool closed() const = 0;
  // `fn` runs once if the connection closes before the response is complete.
  virtual void OnClose(std::function<void()> fn) = 0;
};

// The body and content type of a 400 answer.
struct BadRequestAnswer {
  std::string content_type;
  std::string body;
};

class HttpServer {
 public:
  using Handler = std::function<void(ServerRequest, std::shared_ptr<HttpResponder>)>;

  struct Options {
    uint32_t header_limit = 8 * 1024;             // bytes of a request header
    std::chrono::milliseconds header_timeout{0};  // 0: none
    uint64_t body_limit = 16 * 1024 * 1024;       // bytes; 0: no request has a body
    int max_connections = 0;                      // 0: no limit; past it, closed at once
    bool keep_alive = true;                       // false: one request per connection
    // The 400 for a malformed request or a body too large; `problem` is Beast's words.
    std::function<BadRequestAnswer(std::string_view problem)> bad_request;  // default: text
  };

  HttpServer(boost::asio::io_context& io, Handler handler, Options options);
  HttpServer(boost::asio::io_context& io, Handler handler)
      : HttpServer(io, std::move(handler), Options()) {}
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (a name is resolved; port 0 = any free port) and starts accepting; returns
  // the bound port. InvalidArgument for a host that does not resolve, Unavailable when it
  // cannot be bound.
  Result<int> Listen(const std::string& host, int port);
  // Binds `listen` ("HOST:PORT" as core/net/listen_address.h reads it) and starts accepting;
  // returns the address a client dials ("127.0.0.1:PORT" for 0.0.0.0).
  Result<std::string> Listen(const std::string& listen);
  // Stops accepting; open connections end with the io_context.
  void Stop();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace longhaul::net
