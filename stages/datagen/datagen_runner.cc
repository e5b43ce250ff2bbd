#include "stages/datagen/datagen_runner.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "core/logging.h"
#include "core/strings.h"
#include "stages/common/openai_call.h"

namespace longhaul::stages {
namespace {

constexpr int64_t kProgressEveryNs = 100'000'000;           // 10 progress events a second at most
constexpr int64_t kBackoffMessageEveryNs = 30'000'000'000;  // one "backing off" warning / 30 s

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct DatagenRunner::Job {
  Job(boost::asio::io_context& io, Conversation c, size_t i)
      : input(std::move(c)), index(i), timer(io) {}
  Conversation input;
  size_t index;
  std::vector<ChatMessage> history;  // the conversation as regenerated so far
  size_t next_turn = 0;              // next turn of input.messages to replay
  int retry = 0;                     // retries of the current request
  int attempts = 0;                  // requests sent for this sample
  boost::asio::steady_timer timer;
  bool any_reasoning = false;
  std::string last_reasoning;
};

DatagenRunner::DatagenRunner(boost::asio::io_context& io, net::HttpClient& client,
                             const DatagenOptions& options, std::vector<Conversation> todo,
                             SampleStore& store, EventWriter& events, int64_t total,
                             int64_t already_done)
    : io_(io),
      client_(client),
      options_(options),
      todo_(std::move(todo)),
      store_(store),
      events_(events),
      total_(total),
      already_done_(already_done),
      rng_(std::random_device{}()) {
  backoff_.initial_ms = static_cast<int64_t>(options.retry_initial_backoff_s * 1000);
  backoff_.max_ms = static_cast<int64_t>(options.retry_max_backoff_s * 1000);
  target_ = client_.url().Target("/v1/chat/completions");
}

DatagenRunner::~DatagenRunner() = default;

Status DatagenRunner::Run() {
  boost::asio::post(io_, [this] {
    StartMore();
    if (active_.empty() && !finished_) {
      finished_ = true;
      if (on_finished_) on_finished_();
    }
  });
  io_.run();
  ReportProgress(/*force=*/true);
  return fatal_;
}

void DatagenRunner::Stop() {
  if (stopped_) return;
  stopped_ = true;
  client_.Shutdown();
  for (const auto& job : active_) job->timer.cancel();
  active_.clear();
  if (!finished_) {
    finished_ = true;
    if (on_finished_) on_finished_();
  }
}

void DatagenRunner::Fatal(Status s) {
  if (fatal_.ok()) fatal_ = std::move(s);
  Stop();
}

void DatagenRunner::StartMore() {
  // Fail() -> Retire() calls back in here; a long run of unusable conversations must loop,
  // not recurse.
  if (starting_) return;
  starting_ = true;
  while (!stopped_ && active_.size() < static_cast<size_t>(options_.concurrency) &&
         next_ < todo_.size()) {
    auto job = std::make_shared<Job>(io_, std::move(todo_[next_]), next_);
    ++next_;
    active_.insert(job);
    if (!NextUserTurn(*job)) {
      Fail(job, "the conversation has no user turn to answer");
      continue;
    }
    Request(job);
  }
  starting_ = false;
}

bool DatagenRunner::NextUserTurn(Job& job) {
  const auto& msgs = job.input.messages;
  while (job.next_turn < msgs.size()) {
    const ChatMessage& m = msgs[job.next_turn++];
    if (m.role == "assistant") continue;  // replaced by the endpoint's own answer
    job.history.push_back(ChatMessage(m.role, m.content));
    if (m.role == "user") return true;
  }
  return false;
}

void DatagenRunner::Request(const std::shared_ptr<Job>& job) {
  GenerationParams p;
  p.model = options_.model;
  p.max_tokens = options_.max_tokens;
  p.temperature = options_.temperature;
  p.top_p = options_.top_p;
  if (options_.seed) p.seed = *options_.seed + static_cast<int64_t>(job->index);
  p.stream = options_.stream;
  p.include_usage = true;
  net::HttpTimeouts t;
  t.total_ms = static_cast<int64_t>(options_.request_timeout_s * 1000);
  ++stats_.requests;
  ++job->attempts;
  CallOpenAi(client_, target_, BuildChatRequest(job->history, p), options_.stream, t,
             [this, job](CallOutcome out) {
               if (stopped_) return;
               if (out.status.ok()) {
                 if (out.completion.usage) {
                   stats_.output_tokens += out.completion.usage->completion_tokens;
                 }
                 if (!out.completion.reasoning.empty()) {
                   job->any_reasoning = true;
                   job->last_reasoning = out.completion.reasoning;
                 }
                 job->history.push_back(
                     ChatMessage("assistant", out.completion.content, out.completion.reasoning));
                 job->retry = 0;
                 if (NextUserTurn(*job)) return Request(job);
                 return Finish(job);
               }
               std::string error = ToStd(out.status.message());
               if (out.status.code() == absl::StatusCode::kResourceExhausted) {
                 ++stats_.rate_limited;
               }
               if (!IsRetryable(out.status) || job->retry >= options_.max_request_retries) {
                 return Fail(job, error);
               }
               ++job->retry;
               ++stats_.retries;
               int64_t delay = BackoffMs(backoff_, job->retry, out.retry_after, rng_);
               int64_t now = NowNs();
               if (last_backoff_message_ns_ == 0 ||
                   now - last_backoff_message_ns_ >= kBackoffMessageEveryNs) {
                 last_backoff_message_ns_ = now;
                 std::string text = StrCat(error, "; backing off ", delay, " ms (retry ",
                                           job->retry, " of ", options_.max_request_retries, ")");
                 GetLogger("datagen")->warn("sample {}: {}", job->input.id, text);
                 events_.Message("warn", text);
               }
               job->timer.expires_after(std::chrono::milliseconds(delay));
               job->timer.async_wait([this, job](boost::system::error_code ec) {
                 if (!ec && !stopped_) Request(job);
               });
             });
}

void DatagenRunner::Finish(const std::shared_ptr<Job>& job) {
  Conversation out;
  out.id = job->input.id;
  out.id_json = job->input.id_json;
  out.messages = std::move(job->history);
  out.reasoning = job->last_reasoning;
  Status s = store_.AppendSample(out);
  if (!s.ok()) return Fatal(s);
  ++stats_.done;
  if (job->any_reasoning) ++stats_.with_reasoning;
  Retire(job);
}

void DatagenRunner::Fail(const std::shared_ptr<Job>& job, const std::string& error) {
  ++stats_.failed;
  last_error_ = error;
  GetLogger("datagen")->warn("sample {} failed after {} request(s): {}", job->input.id,
                             job->attempts, error);
  Status s = store_.AppendFailure(job->input, error, job->attempts);
  if (!s.ok()) return Fatal(s);
  if (stats_.done == 0 && stats_.failed >= options_.fail_fast_after) {
    return Fatal(absl::FailedPreconditionError(
        StrCat("the first ", stats_.failed, " samples all failed; last error: ", error)));
  }
  Retire(job);
}

void DatagenRunner::Retire(const std::shared_ptr<Job>& job) {
  active_.erase(job);
  ReportProgress(/*force=*/false);
  StartMore();
  if (active_.empty() && next_ >= todo_.size() && !finished_) {
    finished_ = true;
    if (on_finished_) on_finished_();
  }
}

void DatagenRunner::ReportProgress(bool force) {
  int64_t now = NowNs();
  if (!force && now - last_progress_ns_ < kProgressEveryNs) return;
  last_progress_ns_ = now;
  events_.Progress(static_cast<double>(already_done_ + stats_.done), static_cast<double>(total_),
                   "samples");
}

}  // namespace longhaul::stages
