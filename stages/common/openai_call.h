// One OpenAI-compatible generation request, streamed or not, collected into a Completion,
// with every failure classified so a caller can decide whether to retry.
//
// The outcome's status:
//   OK                  a complete response (streams: ended by [DONE] or a finish_reason)
//   ResourceExhausted   HTTP 429
//   Unavailable         HTTP 5xx, connection refused or broken, an error inside the stream,
//                       a stream that ended early
//   DeadlineExceeded    a timeout (which one is named)
//   InvalidArgument     any other HTTP status (400 prompt too long, 404 unknown model, ...)
//                       or a malformed response
// The message always carries the server's own error text when it sent one.
#pragma once

#include <functional>
#include <string>

#include "core/net/http_client.h"
#include "core/status.h"
#include "stages/common/openai.h"

namespace longhaul::stages {

struct CallOutcome {
  Status status;
  int http_status = 0;
  Completion completion;    // valid when status is OK
  std::string retry_after;  // the Retry-After header of a 429/503, if any
};

// Sends `body` (built with BuildChatRequest / BuildCompletionRequest; `stream` must match
// the body's "stream") to `target` and calls `done` once, on the client's loop.
void CallOpenAi(net::HttpClient& client, std::string target, std::string body, bool stream,
                net::HttpTimeouts timeouts, std::function<void(CallOutcome)> done);

// True for the failures worth another try: 429, 5xx, timeouts, connection errors.
bool IsRetryable(const Status& status);

}  // namespace longhaul::stages
