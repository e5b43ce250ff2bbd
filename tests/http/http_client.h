// A small blocking HTTP/1.1 client for tests and benchmarks of longhauld's HTTP listener
// (Boost.Beast): one request per connection, and an SSE reader that returns events as they
// arrive. Every call has a deadline and says what it saw when it passes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::testing {

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string Header(const std::string& lower) const;
};

// `addr` "HOST:PORT"; `target` "/api/v1/runs?limit=5".
Result<HttpResult> HttpRequest(const std::string& addr, const std::string& method,
                               const std::string& target, const std::string& body = "",
                               const std::map<std::string, std::string>& headers = {},
                               int64_t timeout_ms = 10'000);
inline Result<HttpResult> HttpGet(const std::string& addr, const std::string& target) {
  return HttpRequest(addr, "GET", target);
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
  static Result<std::unique_ptr<SseClient>> Open(const std::string& addr,
                                                 const std::string& target,
                                                 const std::string& last_event_id = "",
                                                 int64_t timeout_ms = 10'000);
  ~SseClient();
  // The next event, waiting up to `timeout_ms`. OutOfRange when the server closed the stream.
  Result<SseEvent> Next(int64_t timeout_ms = 10'000);
  int comments() const { return comments_; }
  int status() const { return status_; }

 private:
  SseClient() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string buffer_;
  int comments_ = 0;
  int status_ = 0;
};

}  // namespace longhaul::testing
