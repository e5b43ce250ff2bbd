// The open-loop load generator: one Asio event loop, one HttpClient (core/net), requests started at
// their planned times whatever is in flight.
//
// Times are steady-clock nanoseconds from the start of the run (not core/clock.h: latencies
// need microseconds, and the schedule is kept by Asio's timers). Every latency is measured
// from the request's planned time, so time spent late (scheduling error) or waiting for a
// concurrency slot (queueing) is part of it, as a user would see it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/net/http_client.h"

namespace longhaul::stages {

struct RequestRecord {
  int64_t index = 0;
  int64_t planned_ns = 0;       // the schedule's time (closed loop: when a slot freed)
  int64_t dispatch_ns = -1;     // when the loop started it: scheduling error = this - planned
  int64_t sent_ns = -1;         // when it got a concurrency slot: queueing = this - dispatch
  int64_t first_token_ns = -1;  // first chunk with content or reasoning text
  int64_t end_ns = -1;
  int http_status = 0;
  bool ok = false;
  std::string error;
  int64_t output_tokens = 0;
  int64_t prompt_tokens = -1;
  bool tokens_from_usage = false;       // else: one token per content chunk
  bool per_chunk_tokens_known = false;  // every content chunk carried a running usage
  std::vector<int64_t> chunk_ns;        // arrival of each content chunk
  std::vector<int32_t> chunk_tokens;    // tokens in each chunk, when known
};

struct RunPlan {
  std::vector<int64_t> planned_ns;  // open loop: send times; empty: closed loop
  int64_t closed_loop_count = 0;    // closed loop: this many requests (0 = until duration)
  std::optional<int64_t> closed_loop_duration_ns;
  int64_t concurrency = 0;  // cap on requests in flight; 0 = none
  int64_t request_timeout_ms = 600'000;
  std::string target;  // "/v1/chat/completions"
  const std::vector<std::string>* bodies = nullptr;
};

class LoadRunner {
 public:
  // Called after each request ends, with the number ended so far.
  using OnComplete = std::function<void(const RequestRecord&, int64_t done)>;

  LoadRunner(boost::asio::io_context& io, net::HttpClient& client, RunPlan plan, OnComplete cb);

  // Called once when the plan has ended (nothing left to send, nothing in flight) or Stop().
  void OnFinished(std::function<void()> fn) { on_finished_ = std::move(fn); }

  // Runs the plan to its end on the calling thread (io.run()).
  void Run();
  // Stops sending; requests in flight are abandoned (recorded as failed "interrupted").
  // Safe to call from a handler on the loop.
  void Stop();

  const std::vector<RequestRecord>& records() const { return records_; }
  int64_t start_epoch_ms() const { return start_epoch_ms_; }
  bool interrupted() const { return stopped_; }

 private:
  struct Stream;
  int64_t Now() const;
  void Tick();
  void Dispatch(size_t i);
  void Send(size_t i);
  void Ended(size_t i);
  bool ClosedLoopWantsMore() const;
  void MaybeFinished();
  size_t NewRecord(int64_t planned_ns);

  boost::asio::io_context& io_;
  net::HttpClient& client_;
  RunPlan plan_;
  OnComplete on_complete_;
  std::function<void()> on_finished_;
  bool finished_ = false;
  boost::asio::steady_timer timer_;
  std::chrono::steady_clock::time_point start_;
  int64_t start_epoch_ms_ = 0;
  std::vector<RequestRecord> records_;
  std::vector<size_t> waiting_;  // FIFO of requests waiting for a slot
  size_t waiting_head_ = 0;
  size_t next_ = 0;  // next planned send
  int64_t in_flight_ = 0;
  int64_t ended_ = 0;
  bool stopped_ = false;
};

}  // namespace longhaul::stages
