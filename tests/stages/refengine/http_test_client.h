// A tiny blocking HTTP/1.1 client for the refengine's tests: one request per connection
// (Connection: close), chunked bodies decoded, a receive timeout. Not for production use.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace longhaul::refengine::testing {

struct HttpResult {
  int status = 0;  // 0: no response (connect failed, timeout, connection closed)
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool timed_out = false;
};

HttpResult HttpGet(int port, const std::string& path, int timeout_ms = 10000);
HttpResult HttpPost(int port, const std::string& path, const std::string& body,
                    int timeout_ms = 10000);
HttpResult PostJson(int port, const std::string& path, const nlohmann::json& body,
                    int timeout_ms = 10000);

// The JSON objects of an SSE body's "data: {...}" events, and whether "[DONE]" ended it.
std::vector<nlohmann::json> SseEvents(const std::string& body, bool* done);

// Prometheus text: the value of the sample NAME{LABELS} (labels as written, or "" for any
// labels), or -1 if absent.
double MetricValue(const std::string& text, const std::string& name,
                   const std::string& label_filter = "");

}  // namespace longhaul::refengine::testing
