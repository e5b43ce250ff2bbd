#include "stages/common/openai_call.h"

#include <memory>

#include "core/strings.h"
#include "stages/common/sse.h"

namespace longhaul::stages {
namespace {

constexpr size_t kMaxErrorBody = 4096;

struct CallState {
  CallState() : sse([this](const SseEvent& e) { Event(e); }) {}

  void Event(const SseEvent& e) {
    if (!stream_error.ok()) return;
    auto d = ParseStreamEvent(e.data);
    if (!d.ok()) {
      stream_error = d.status();
      return;
    }
    if (d->done) {
      saw_done = true;
      return;
    }
    Accumulate(*d, out.completion);
  }

  bool stream = false;
  SseParser sse;
  std::string body;  // whole body (non-streaming) or error body
  Status stream_error;
  bool saw_done = false;
  CallOutcome out;
};

Status HttpError(int status, const std::string& body) {
  std::string msg = StrCat("HTTP ", status, ": ", ErrorBodyText(body));
  if (status == 429) return absl::ResourceExhaustedError(msg);
  if (status >= 500) return absl::UnavailableError(msg);
  return absl::InvalidArgumentError(msg);
}

}  // namespace

bool IsRetryable(const Status& s) {
  return s.code() == absl::StatusCode::kResourceExhausted ||
         s.code() == absl::StatusCode::kUnavailable ||
         s.code() == absl::StatusCode::kDeadlineExceeded;
}

void CallOpenAi(net::HttpClient& client, std::string target, std::string body, bool stream,
                net::HttpTimeouts timeouts, std::function<void(CallOutcome)> done) {
  auto st = std::make_shared<CallState>();
  st->stream = stream;
  net::HttpRequest req;
  req.method = "POST";
  req.target = std::move(target);
  req.body = std::move(body);
  req.timeouts = timeouts;
  if (stream) req.headers.push_back({"Accept", "text/event-stream"});
  net::HttpHandler h;
  h.on_head = [st](const net::HttpResponseHead& head) {
    st->out.http_status = head.status;
    st->out.retry_after = std::string(head.Header("retry-after"));
  };
  h.on_body = [st](std::string_view piece) {
    if (st->stream && st->out.http_status == 200) {
      Status s = st->sse.Feed(piece);
      if (!s.ok() && st->stream_error.ok()) st->stream_error = s;
    } else if (st->out.http_status == 200 || st->body.size() < kMaxErrorBody) {
      st->body.append(piece);
    }
  };
  h.on_done = [st, done = std::move(done)](const Status& transport) {
    CallOutcome& out = st->out;
    if (!transport.ok()) {
      out.status = transport;
    } else if (out.http_status != 200) {
      out.status = HttpError(out.http_status, st->body);
    } else if (st->stream) {
      st->sse.Finish();
      if (!st->stream_error.ok()) {
        out.status = absl::UnavailableError(ToStd(st->stream_error.message()));
      } else if (!st->saw_done && out.completion.finish_reason.empty()) {
        out.status = absl::UnavailableError(
            "the stream ended without [DONE] or a finish_reason (server died mid-answer?)");
      }
    } else {
      auto c = ParseCompletionResponse(st->body);
      if (c.ok()) {
        out.completion = std::move(*c);
      } else {
        out.status = c.status();
      }
    }
    done(std::move(out));
  };
  client.Send(std::move(req), std::move(h));
}

}  // namespace longhaul::stages
