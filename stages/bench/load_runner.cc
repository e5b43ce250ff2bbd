#include "stages/bench/load_runner.h"

#include <boost/asio/post.hpp>
#include <memory>

#include "core/strings.h"
#include "stages/common/openai.h"
#include "stages/common/sse.h"

namespace longhaul::stages {

namespace {
constexpr size_t kMaxErrorBody = 2048;
}  // namespace

// The state of one response while it streams in.
struct LoadRunner::Stream {
  Stream(LoadRunner* r, size_t i)
      : runner(r), index(i), sse([this](const SseEvent& e) { Event(e); }) {}

  void Event(const SseEvent& e) {
    RequestRecord& rec = runner->records_[index];
    auto d = ParseStreamEvent(e.data);
    if (!d.ok()) {
      if (stream_error.empty()) stream_error = ToStd(d.status().message());
      return;
    }
    bool text = !d->content.empty() || !d->reasoning.empty();
    if (text) {
      int64_t now = runner->Now();
      if (rec.first_token_ns < 0) rec.first_token_ns = now;
      rec.chunk_ns.push_back(now);
      ++content_chunks;
      if (d->usage) {
        rec.chunk_tokens.push_back(
            static_cast<int32_t>(d->usage->completion_tokens - running_tokens));
        running_tokens = d->usage->completion_tokens;
      } else {
        chunks_without_usage = true;
      }
    }
    if (d->usage) {
      usage = d->usage;
      running_tokens = std::max(running_tokens, d->usage->completion_tokens);
    }
  }

  LoadRunner* runner;
  size_t index;
  SseParser sse;
  std::string error_body;
  std::string stream_error;
  std::optional<Usage> usage;
  int64_t running_tokens = 0;
  int64_t content_chunks = 0;
  bool chunks_without_usage = false;
};

LoadRunner::LoadRunner(boost::asio::io_context& io, net::HttpClient& client, RunPlan plan,
                       OnComplete cb)
    : io_(io), client_(client), plan_(std::move(plan)), on_complete_(std::move(cb)), timer_(io) {
  records_.reserve(plan_.planned_ns.empty() ? static_cast<size_t>(plan_.closed_loop_count)
                                            : plan_.planned_ns.size());
}

int64_t LoadRunner::Now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start_)
      .count();
}

size_t LoadRunner::NewRecord(int64_t planned_ns) {
  RequestRecord rec;
  rec.index = static_cast<int64_t>(records_.size());
  rec.planned_ns = planned_ns;
  records_.push_back(std::move(rec));
  return records_.size() - 1;
}

void LoadRunner::Run() {
  // Records first: allocating them after the clock starts would make the first sends late.
  for (int64_t t : plan_.planned_ns) NewRecord(t);
  boost::asio::post(io_, [this] {
    start_ = std::chrono::steady_clock::now();
    start_epoch_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    if (!plan_.planned_ns.empty()) return Tick();
    int64_t first = plan_.concurrency > 0 ? plan_.concurrency : 1;
    for (int64_t k = 0; k < first && ClosedLoopWantsMore(); ++k) Dispatch(NewRecord(Now()));
  });
  io_.run();
}

void LoadRunner::Stop() {
  if (stopped_) return;
  stopped_ = true;
  timer_.cancel();
  client_.Shutdown();  // drops handlers: mark what was in flight ourselves
  for (auto& rec : records_) {
    if (rec.sent_ns >= 0 && rec.end_ns < 0) {
      rec.end_ns = Now();
      rec.error = "interrupted";
    }
  }
  MaybeFinished();
}

void LoadRunner::MaybeFinished() {
  if (finished_) return;
  bool done = stopped_;
  if (!done && in_flight_ == 0 && waiting_head_ == waiting_.size()) {
    done = plan_.planned_ns.empty() ? !ClosedLoopWantsMore() : next_ == plan_.planned_ns.size();
  }
  if (!done) return;
  finished_ = true;
  if (on_finished_) on_finished_();
}

bool LoadRunner::ClosedLoopWantsMore() const {
  if (stopped_) return false;
  if (plan_.closed_loop_count > 0 &&
      static_cast<int64_t>(records_.size()) >= plan_.closed_loop_count) {
    return false;
  }
  if (plan_.closed_loop_duration_ns && Now() >= *plan_.closed_loop_duration_ns) return false;
  return true;
}

void LoadRunner::Tick() {
  if (stopped_) return;
  const auto& planned = plan_.planned_ns;
  while (next_ < planned.size() && planned[next_] <= Now()) Dispatch(next_++);
  if (next_ < planned.size()) {
    timer_.expires_at(start_ + std::chrono::nanoseconds(planned[next_]));
    timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) Tick();
    });
  }
}

void LoadRunner::Dispatch(size_t i) {
  records_[i].dispatch_ns = Now();
  if (plan_.concurrency > 0 && in_flight_ >= plan_.concurrency) {
    waiting_.push_back(i);
    return;
  }
  Send(i);
}

void LoadRunner::Send(size_t i) {
  RequestRecord& rec = records_[i];
  rec.sent_ns = Now();
  ++in_flight_;
  net::HttpRequest req;
  req.method = "POST";
  req.target = plan_.target;
  req.body = (*plan_.bodies)[i % plan_.bodies->size()];
  req.timeouts.total_ms = plan_.request_timeout_ms;
  auto stream = std::make_shared<Stream>(this, i);
  net::HttpHandler h;
  h.on_head = [this, stream](const net::HttpResponseHead& head) {
    records_[stream->index].http_status = head.status;
  };
  h.on_body = [this, stream](std::string_view piece) {
    if (records_[stream->index].http_status == 200) {
      Status s = stream->sse.Feed(piece);
      if (!s.ok() && stream->stream_error.empty()) stream->stream_error = ToStd(s.message());
    } else if (stream->error_body.size() < kMaxErrorBody) {
      stream->error_body.append(piece.substr(0, kMaxErrorBody - stream->error_body.size()));
    }
  };
  h.on_done = [this, stream](const Status& s) {
    RequestRecord& r = records_[stream->index];
    r.end_ns = Now();
    if (s.ok() && r.http_status == 200) stream->sse.Finish();
    if (!s.ok()) {
      r.error = ToStd(s.message());
    } else if (r.http_status != 200) {
      r.error = StrCat("HTTP ", r.http_status, ": ", ErrorBodyText(stream->error_body));
    } else if (!stream->stream_error.empty()) {
      r.error = stream->stream_error;
    } else {
      r.ok = true;
    }
    if (stream->usage) {
      r.output_tokens = stream->usage->completion_tokens;
      r.prompt_tokens = stream->usage->prompt_tokens;
      r.tokens_from_usage = true;
    } else {
      r.output_tokens = stream->content_chunks;
    }
    r.per_chunk_tokens_known = !stream->chunks_without_usage && !r.chunk_tokens.empty();
    if (!r.per_chunk_tokens_known) r.chunk_tokens.clear();
    Ended(stream->index);
  };
  client_.Send(std::move(req), std::move(h));
}

void LoadRunner::Ended(size_t i) {
  --in_flight_;
  ++ended_;
  if (on_complete_) on_complete_(records_[i], ended_);
  if (stopped_) return;
  if (waiting_head_ < waiting_.size()) {
    Send(waiting_[waiting_head_++]);
  } else if (plan_.planned_ns.empty() && ClosedLoopWantsMore()) {
    Dispatch(NewRecord(Now()));
  }
  MaybeFinished();
}

}  // namespace longhaul::stages
