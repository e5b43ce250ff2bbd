// JSON for the HTTP API: every body is a longhaul.v1 message printed by protobuf's JSON
// printer with the field names of the .proto (snake_case) and every primitive field present,
// so enums are names, int64 are strings. Errors are {"error": "...", "code": "NOT_FOUND"}.
#pragma once

#include <google/protobuf/message.h>

#include <string>

#include "core/status.h"
#include "daemon/http/message.h"

namespace longhaul::http {

std::string ToJson(const google::protobuf::Message& message);
// Parses `body` into `message` (unknown fields are an error). `what` names the body in errors.
Status FromJson(const std::string& body, const std::string& what,
                google::protobuf::Message* message);

// 200 application/json with `message`.
Response JsonResponse(const google::protobuf::Message& message);
// The HTTP status for a canonical code: 400 bad input, 404 not found, 409 conflicting state,
// 503 unavailable, 504 deadline, 500 otherwise.
int HttpStatusFor(absl::StatusCode code);
// An error body for `status` (not OK), with the HTTP status HttpStatusFor() gives.
Response ErrorResponse(const Status& status);
// An error body with an explicit HTTP status (403, 405, 503 for the stream cap). Bytes of
// `message` that are not UTF-8 (an echoed path or method) are replaced by U+FFFD.
Response ErrorResponse(int http_status, absl::StatusCode code, const std::string& message);

// Returns the JSON response for an OK result, the error response otherwise.
template <typename T>
Response Reply(const Result<T>& result) {
  return result.ok() ? JsonResponse(*result) : ErrorResponse(result.status());
}

}  // namespace longhaul::http
