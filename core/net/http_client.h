// The HTTP/1.1 client of every longhaul program (the stages' engine calls and scrapes,
// longhauld's webhooks), for one server, on a Boost.Asio io_context (Beast parses responses):
// a keep-alive connection pool, connect / first-byte / total timeouts, response bodies
// delivered piece by piece as they arrive (chunked encoding decoded), for streaming APIs.
//
// TLS for an https:// URL (OpenSSL): the server's certificate must chain to the system's CA
// store, or to Options::ca_file when one is given, and name the URL's host; the host name is
// sent as SNI (not for an IP address). A handshake that fails is Unavailable "TLS handshake
// with HOST:PORT: certificate verify failed (REASON)" or OpenSSL's reason; the handshake
// counts against the connect timeout.
//
// The host's addresses are looked up once, by the first request that needs a connection, on a
// thread of its own (getaddrinfo cannot be cancelled or given a timeout): a lookup that does
// not answer within a waiting request's connect timeout (or its total timeout, if sooner)
// fails that request with DeadlineExceeded "resolve HOST: no answer within N ms (the connect
// timeout)", and one that fails fails them all with Unavailable "resolve HOST: REASON"; the
// next request looks up again. A lookup's answer is kept for the client's life.
//
// Open loop by default: a request that finds no idle connection opens a new one at once, so
// nothing ever waits for another request to finish. With max_connections set, requests wait
// in FIFO order for a connection (the wait counts against their total timeout).
//
// Threading: every method and every handler runs on the io_context's thread; the client is
// not thread-safe. Handlers are never called from inside Send(). Destroying the client (or
// Shutdown()) closes every connection and drops pending handlers without calling them.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/net/url.h"
#include "core/status.h"

namespace longhaul::net {

struct HttpTimeouts {
  int64_t connect_ms = 10'000;  // looking the host up (the first request), and one TCP connect
  int64_t first_byte_ms = 0;    // request written -> first body byte (or an empty body's end)
  int64_t total_ms = 0;         // Send() -> response complete, queueing included
};                              // 0 = no limit. Enforced with 10 ms granularity.

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";
  std::string target = "/";  // path and query, starting with '/'
  std::string body;
  std::string content_type = "application/json";  // sent only with a body
  HttpHeaders headers;  // extra headers; names and values must not contain CR or LF
  HttpTimeouts timeouts;
  // The most response body bytes taken; past it the request fails (InvalidArgument "...
  // body limit exceeded") and the connection closes. 0: no limit (a stream runs as long as
  // the server sends).
  uint64_t body_limit = 0;
};

struct HttpResponseHead {
  int status = 0;
  HttpHeaders headers;
  // The first header with this name (case-insensitive), or "".
  std::string_view Header(std::string_view name) const;
};

struct HttpHandler {
  std::function<void(const HttpResponseHead&)> on_head;  // optional
  std::function<void(std::string_view)> on_body;         // optional: each piece of the body
  // Required, called exactly once. OK when the whole response arrived, whatever its status.
  // Unavailable: connect failed or the connection broke; DeadlineExceeded: a timeout, named
  // in the message; InvalidArgument: a malformed response.
  std::function<void(const Status&)> on_done;
};

class HttpClient {
 public:
  struct Options {
    size_t max_connections = 0;  // 0: no limit (open loop)
    size_t max_idle = 4096;      // idle keep-alive connections kept for reuse
    std::string ca_file;         // https: PEM CA certificates to trust; "": the system's
    // Tests only (a slow name service): runs on the lookup's thread before each lookup.
    std::function<void(const std::string& host)> before_resolve = nullptr;
  };
  struct Stats {
    int64_t connections_opened = 0;
    int64_t stale_retries = 0;  // requests re-sent after a kept-alive connection was closed
    int64_t in_flight = 0;
    int64_t queued = 0;
  };

  HttpClient(boost::asio::io_context& io, HttpUrl url, Options options);
  HttpClient(boost::asio::io_context& io, HttpUrl url) : HttpClient(io, std::move(url), {}) {}
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Starts a request. `request.target` is sent as is (the URL's path is not added; use
  // url().Target(path)). A CA file that cannot be loaded fails every request with
  // FailedPrecondition naming it.
  void Send(HttpRequest request, HttpHandler handler);
  void Shutdown();

  const HttpUrl& url() const;
  Stats stats() const;

  class Core;  // shared with the connections' pending operations

 private:
  std::shared_ptr<Core> core_;
};

// A whole response, for the blocking helper below.
struct HttpResult {
  HttpResponseHead head;
  std::string body;
  int status() const { return head.status; }
};

// Blocking request on a private io_context, for probes, scrapes and webhooks outside an event
// loop. Thread-safe (each call has its own io_context and connection).
Result<HttpResult> HttpFetch(const HttpUrl& url, HttpRequest request,
                             const HttpClient::Options& options = {});

}  // namespace longhaul::net
