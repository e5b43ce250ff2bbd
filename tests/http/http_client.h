// A small blocking HTTP/1.1 client for tests and benchmarks of longhauld's HTTP listener
// (Boost.Beast): one request per connection, plaintext or TLS, an SSE reader that returns
// events as they arrive, and a raw connection for hostile-client tests. Every call has a
// deadline and says what it saw when it passes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::testing {

// Where to send: "HOST:PORT" (plaintext), or with `ca_file` HTTPS whose certificate must chain
// to that CA and name `server_name`.
struct HttpEndpoint {
  HttpEndpoint(const std::string& address) : addr(address) {}  // NOLINT: implicit on purpose
  HttpEndpoint(const char* address) : addr(address) {}         // NOLINT
  HttpEndpoint(const std::string& address, const std::string& ca, const std::string& name)
      : addr(address), ca_file(ca), server_name(name) {}
  std::string addr;
  std::string ca_file;  // empty: plaintext
  std::string server_name = "localhost";
};

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string Header(const std::string& lower) const;
};

// `addr` "HOST:PORT"; `target` "/api/v1/runs?limit=5".
// The Host header is `addr` unless `headers` names one.
Result<HttpResult> HttpRequest(const HttpEndpoint& to, const std::string& method,
                               const std::string& target, const std::string& body = "",
                               const std::map<std::string, std::string>& headers = {},
                               int64_t timeout_ms = 10'000);
inline Result<HttpResult> HttpGet(const HttpEndpoint& to, const std::string& target) {
  return HttpRequest(to, "GET", target);
}

struct SseEvent {
  std::string id;
  std::string event;  // "message" when the server named none
  std::string data;
};

// One open GET text/event-stream. Comments (": hb") are counted, not returned.
class SseClient {
 public:
  // Connects, sends the request and reads the response head. A status other than 200 is
  // returned as an error whose message holds the status and body.
  static Result<std::unique_ptr<SseClient>> Open(
      const HttpEndpoint& to, const std::string& target, const std::string& last_event_id = "",
      int64_t timeout_ms = 10'000, const std::map<std::string, std::string>& headers = {});
  // The response head's header fields (lower-case names).
  const std::map<std::string, std::string>& headers() const { return headers_; }
  ~SseClient();
  // The next event, waiting up to `timeout_ms`. OutOfRange when the server closed the stream.
  Result<SseEvent> Next(int64_t timeout_ms = 10'000);
  int comments() const { return comments_; }
  int status() const { return status_; }

 private:
  SseClient() = default;
  Result<size_t> ReadSome(char* data, size_t size, int64_t timeout_ms);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string buffer_;
  std::map<std::string, std::string> headers_;
  int comments_ = 0;
  int status_ = 0;
};

// A plaintext TCP connection that sends whatever bytes it is given: for partial requests, huge
// headers and other things a well-behaved client never sends.
class RawConnection {
 public:
  static Result<std::unique_ptr<RawConnection>> Open(const std::string& addr,
                                                     int64_t timeout_ms = 10'000);
  ~RawConnection();
  // Writes all of `bytes`; an error when the peer reset or closed the connection.
  Status Write(const std::string& bytes, int64_t timeout_ms = 10'000);
  // Reads until what came holds `marker`; returns all that came. DeadlineExceeded or an error
  // (with what came) otherwise.
  Result<std::string> ReadUntil(const std::string& marker, int64_t timeout_ms = 10'000);
  // Reads until the server closes the connection: what it sent. DeadlineExceeded (with what
  // came so far) when it is still open after `timeout_ms`; an error on a reset.
  Result<std::string> ReadUntilClose(int64_t timeout_ms);

 private:
  RawConnection() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace longhaul::testing
