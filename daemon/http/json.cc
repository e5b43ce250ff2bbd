#include "daemon/http/json.h"

#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"

namespace longhaul::http {
namespace {

// An error body's text may echo the request (a path, a method, a name from the body), which
// need not be UTF-8: nlohmann's dump() throws on such bytes, so they become U+FFFD.
std::string ErrorBody(const std::string& message, std::string_view code) {
  return nlohmann::json{{"error", message}, {"code", code}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) {
    return ErrorBody(
        "cannot print " + message.GetTypeName() + ": " + std::string(status.message()),
        "INTERNAL");
  }
  return out;
}

Status FromJson(const std::string& body, const std::string& what,
                google::protobuf::Message* message) {
  if (body.empty()) return OkStatus();  // an empty body is an empty message
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(body, message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(StrCat(what, ": not a valid ", message->GetTypeName(),
                                             " in JSON: ", std::string(status.message())));
  }
  return OkStatus();
}

Response JsonResponse(const google::protobuf::Message& message) {
  Response r;
  r.body = ToJson(message);
  return r;
}

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted: return 409;
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    case absl::StatusCode::kUnimplemented: return 501;
    default: return 500;
  }
}

Response ErrorResponse(int http_status, absl::StatusCode code, const std::string& message) {
  Response r;
  r.status = http_status;
  r.body = ErrorBody(message, absl::StatusCodeToString(code));
  return r;
}

Response ErrorResponse(const Status& status) {
  return ErrorResponse(HttpStatusFor(status.code()), status.code(),
                       std::string(status.message()));
}

}  // namespace longhaul::http
