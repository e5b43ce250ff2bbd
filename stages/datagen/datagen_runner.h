// Regenerates the assistant turns of conversations against an OpenAI-compatible endpoint,
// `concurrency` samples at a time, on one Asio event loop.
//
// A sample's turns are replayed in order: system and user turns as given, each assistant
// turn replaced by what the endpoint answers to the conversation so far (so a multi-turn
// sample costs one request per user turn). A request that fails with 429, 5xx, a timeout or
// a connection error is retried after a backoff (backoff.h) up to max_request_retries times
// inside the process, without failing the stage; a sample whose request fails for good is
// recorded in the failed side file and counted.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/event_writer.h"
#include "core/net/http_client.h"
#include "core/status.h"
#include "stages/common/jsonl.h"
#include "stages/datagen/backoff.h"
#include "stages/datagen/datagen_options.h"
#include "stages/datagen/sample_store.h"

namespace longhaul::stages {

struct DatagenStats {
  int64_t done = 0;      // samples finished in this attempt
  int64_t failed = 0;    // samples that failed every retry
  int64_t requests = 0;  // HTTP requests sent, retries included
  int64_t retries = 0;
  int64_t rate_limited = 0;    // 429 answers
  int64_t output_tokens = 0;   // usage.completion_tokens summed over successful requests
  int64_t with_reasoning = 0;  // finished samples with reasoning text captured
};

class DatagenRunner {
 public:
  // `todo`: the samples still to generate; `total`/`already_done` for progress events.
  DatagenRunner(boost::asio::io_context& io, net::HttpClient& client, const DatagenOptions& options,
                std::vector<Conversation> todo, SampleStore& store, EventWriter& events,
                int64_t total, int64_t already_done);
  ~DatagenRunner();

  // Called once when everything has ended, or after Stop() / a fatal error.
  void OnFinished(std::function<void()> fn) { on_finished_ = std::move(fn); }

  // Runs on the calling thread until every sample is finished or failed. Errors: writing the
  // output failed, or the first fail_fast_after samples all failed (wrong model or
  // endpoint): the message carries the last error.
  Status Run();
  // Stops at once (a signal): requests in flight are abandoned, nothing more is written.
  void Stop();
  bool stopped() const { return stopped_; }
  const DatagenStats& stats() const { return stats_; }

 private:
  struct Job;
  void StartMore();
  bool NextUserTurn(Job& job);
  void Request(const std::shared_ptr<Job>& job);
  void Finish(const std::shared_ptr<Job>& job);
  void Fail(const std::shared_ptr<Job>& job, const std::string& error);
  void Retire(const std::shared_ptr<Job>& job);
  void Fatal(Status s);
  void ReportProgress(bool force);

  boost::asio::io_context& io_;
  net::HttpClient& client_;
  const DatagenOptions& options_;
  std::vector<Conversation> todo_;
  SampleStore& store_;
  EventWriter& events_;
  int64_t total_;
  int64_t already_done_;
  BackoffPolicy backoff_;
  std::mt19937_64 rng_;
  std::string target_;
  size_t next_ = 0;
  std::set<std::shared_ptr<Job>> active_;
  DatagenStats stats_;
  Status fatal_;
  bool stopped_ = false;
  bool finished_ = false;
  bool starting_ = false;
  std::function<void()> on_finished_;
  int64_t last_progress_ns_ = 0;
  int64_t last_backoff_message_ns_ = 0;
  std::string last_error_;
};

}  // namespace longhaul::stages
