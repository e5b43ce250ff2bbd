// An in-process OpenAI-compatible server for the client-side stages' tests and the load
// generator's benchmark: Boost.Beast on loopback, port 0, canned tokens with known timing.
//
//   POST /v1/chat/completions, /v1/completions  streaming (SSE, chunked) or not; honours
//        max_tokens, ignore_eos (repeats the canned tokens up to max_tokens), stream_options
//        include_usage and continuous_usage_stats; `reasoning` tokens go out first in the
//        configured field.
//   GET  /health (200, or 503 while unhealthy), /metrics (vLLM spec-decode counters and
//        SGLang gauges, counting what was served), /get_server_info, /v1/models.
//
// Speculative counters are derived from chunking: a response of n chunks adds n drafts,
// n*num_spec_tokens draft tokens and n*(tokens_per_chunk-1) accepted tokens (per position
// 0..tokens_per_chunk-2), i.e. a server that accepts tokens_per_chunk-1 drafts per round.
//
// Faults: a queue of statuses for the next requests (429, 500, ... or kDrop to close the
// connection without answering, kDropMidStream to close after the first chunk), a predicate
// over the request body, and hang (accept, never answer). Thread-safe; its own threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace longhaul::testing {

struct FakeOpenAiOptions {
  std::vector<std::string> content = {"Hello", " there", ",", " my", " friend", "."};
  std::vector<std::string> reasoning;         // generated before the content
  std::string reasoning_field = "reasoning";  // or "reasoning_content"
  int tokens_per_chunk = 1;
  int num_spec_tokens = 3;
  int64_t first_chunk_delay_us = 0;  // after the request, before the first chunk
  int64_t chunk_interval_us = 0;     // between chunks
  int threads = 1;
  bool keep_alive = true;
  std::string retry_after;  // Retry-After header on 429s, if set
};

class FakeOpenAiServer {
 public:
  static constexpr int kDrop = -1;           // close the connection without a response
  static constexpr int kDropMidStream = -2;  // send headers and one chunk, then close

  explicit FakeOpenAiServer(FakeOpenAiOptions options = {});
  ~FakeOpenAiServer();  // stops

  // Binds `host`:`port` (0 = pick) and starts serving. Returns the port. url() names
  // 127.0.0.1 whatever `host` is.
  int Start(int port = 0, const std::string& host = "127.0.0.1");
  void Stop();
  int port() const { return port_; }
  std::string url() const;  // "http://127.0.0.1:PORT"

  // Faults.
  void PushStatuses(const std::vector<int>& statuses);  // for the next requests, in order
  // Called for each generation request; a non-zero result is answered as PushStatuses' are.
  void SetFailWhen(std::function<int(const nlohmann::json& request)> fn);
  void SetHang(bool hang);
  void SetHealthy(bool healthy);

  // What was received: the bodies of generation requests, in arrival order.
  std::vector<nlohmann::json> requests() const;
  int64_t generation_requests() const;
  int64_t completed() const;
  int64_t connections() const;
  // The most generation requests that were waiting for their first chunk at one time: 1 for a
  // client that waits for each answer before it sends again, whatever the timing.
  int64_t max_waiting_first_chunk() const;

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
  std::vector<std::thread> threads_;
  int port_ = 0;
};

}  // namespace longhaul::testing
