#include "daemon/http/router.h"

#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/metrics.h"
#include "core/strings.h"
#include "daemon/http/api.h"
#include "daemon/http/json.h"

namespace longhaul::http {
namespace {

constexpr char kApiPrefix[] = "/api/v1/";

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// "http://host:port" -> "host:port"; "" when it has no scheme.
std::string OriginHost(const std::string& origin) {
  size_t scheme = origin.find("://");
  if (scheme == std::string::npos) return "";
  std::string host = origin.substr(scheme + 3);
  size_t slash = host.find('/');
  if (slash != std::string::npos) host.resize(slash);
  return host;
}

}  // namespace

std::optional<Response> Router::Admit(Request& request) const {
  Result<auth::Principal> who = authorizer_->Authorize(request);
  if (!who.ok()) return ErrorResponse(who.status());
  request.principal = *std::move(who);
  if (request.method == "POST" || request.method == "DELETE") {
    std::string origin = request.Header("origin");
    if (!origin.empty() && OriginHost(origin) != request.Header("host")) {
      return ErrorResponse(403, absl::StatusCode::kPermissionDenied,
                           StrCat(request.method, " ", request.path, ": Origin '", origin,
                                  "' does not match Host '", request.Header("host"),
                                  "' (requests from other sites are refused)"));
    }
  }
  return std::nullopt;
}

std::optional<Result<int64_t>> Router::WatchTarget(const Request& request) {
  if (request.method != "GET") return std::nullopt;
  std::vector<std::string> seg = Split(request.path);
  if (seg.size() != 5 || seg[0] != "api" || seg[1] != "v1" || seg[2] != "runs" ||
      seg[4] != "watch") {
    return std::nullopt;
  }
  int64_t id = 0;
  for (char c : seg[3]) {
    if (c < '0' || c > '9' || id > INT64_MAX / 10 - 9) {
      return Result<int64_t>(absl::InvalidArgumentError(
          StrCat("run id '", seg[3], "' in ", request.path, " is not a number")));
    }
    id = id * 10 + (c - '0');
  }
  return Result<int64_t>(id);
}

// POST /api/v1/login {"token": "..."}: the browser's way to present a token once. The token
// is checked as a read would check it; the answer sets it as an HttpOnly, SameSite=Strict
// cookie, which every later request (EventSource's included) carries. POST /api/v1/logout
// clears it.
Response Router::Login(const Request& request) const {
  Response r;
  r.status = 204;
  r.content_type = "";
  if (request.path == "/api/v1/logout") {
    r.headers.emplace_back("Set-Cookie",
                           "longhaul_token=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    return r;
  }
  nlohmann::json body = nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("token") || !body["token"].is_string()) {
    return ErrorResponse(400, absl::StatusCode::kInvalidArgument,
                         "POST /api/v1/login: the body must be {\"token\": \"...\"}");
  }
  std::string token = body["token"].get<std::string>();
  if (token.empty() || token.find_first_of(";\r\n ,") != std::string::npos) {
    return ErrorResponse(401, absl::StatusCode::kUnauthenticated, "not a valid token");
  }
  Request probe;
  probe.method = "GET";
  probe.path = "/api/v1/runs";
  probe.peer = request.peer;
  probe.headers["authorization"] = "Bearer " + token;
  if (Result<auth::Principal> who = authorizer_->Authorize(probe); !who.ok()) {
    return ErrorResponse(who.status());
  }
  // Over HTTPS the browser must never send it back in plaintext.
  r.headers.emplace_back("Set-Cookie", StrCat("longhaul_token=", token,
                                              "; Path=/; HttpOnly; SameSite=Strict",
                                              request.tls ? "; Secure" : ""));
  return r;
}

Response Router::Handle(const Request& request) const {
  if (request.method == "POST" &&
      (request.path == "/api/v1/login" || request.path == "/api/v1/logout")) {
    return Login(request);
  }
  if (request.path == "/metrics" && (request.method == "GET" || request.method == "HEAD")) {
    Result<std::string> text = api_->MetricsText();
    if (!text.ok()) return ErrorResponse(text.status());
    Response r;
    r.content_type = metrics::kTextFormatContentType;
    r.body = std::move(*text);
    return r;
  }
  if (request.path == "/readyz") {
    // Ready: the scheduler loop turns and the store commits. /healthz only says the process
    // answers.
    Response r;
    r.content_type = "text/plain; charset=utf-8";
    if (Status ready = api_->Ready(5'000); !ready.ok()) {
      r.status = 503;
      r.body = StrCat("not ready: ", ready.message(), "\n");
      return r;
    }
    r.body = "ok";
    return r;
  }
  if (request.path == "/healthz" || request.path == "/api/v1/healthz") {
    Response r;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "ok";
    return r;
  }
  if (request.path.rfind(kApiPrefix, 0) == 0 || request.path == "/api/v1" ||
      request.path == "/api" || request.path.rfind("/api/", 0) == 0) {
    if (request.path.rfind(kApiPrefix, 0) != 0) {
      return ErrorResponse(404, absl::StatusCode::kNotFound,
                           StrCat("no API at ", request.path, " (the API is under /api/v1/)"));
    }
    return HandleApi(api_, request, Split(request.path.substr(sizeof(kApiPrefix) - 1)));
  }
  return files_->Serve(request);
}

}  // namespace longhaul::http
