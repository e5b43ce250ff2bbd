#include "daemon/http/api.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/log_read.h"
#include "core/log_search.h"
#include "core/strings.h"
#include "daemon/auth/action.h"
#include "daemon/http/json.h"
#include "daemon/http/metric_series.h"
#include "daemon/rpc/audited_call.h"
#include "proto/stage_merge.h"
#include "proto/state_names.h"

namespace longhaul::http {
namespace {

constexpr int kMaxRunsPage = 500;
constexpr int64_t kMaxDownloadBytes = int64_t{1} << 30;
// A log search's answer: at most this many matching lines (`limit`), each cut to this length.
constexpr int64_t kDefaultLogMatches = 100;
constexpr int64_t kMaxLogMatches = 1000;
constexpr size_t kMaxMatchLineBytes = 1000;

Result<int64_t> ParseInt(const std::string& text, const std::string& what) {
  if (text.empty()) return absl::InvalidArgumentError(StrCat(what, " is empty"));
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0') {
    return absl::InvalidArgumentError(StrCat(what, ": '", text, "' is not an integer"));
  }
  return static_cast<int64_t>(v);
}

// Query parameter `name` as an integer, `fallback` when absent.
Result<int64_t> IntParam(const Request& req, const std::string& name, int64_t fallback) {
  std::optional<std::string> v = req.Query(name);
  if (!v) return fallback;
  return ParseInt(*v, StrCat("query parameter '", name, "'"));
}

bool BoolParam(const Request& req, const std::string& name) {
  std::optional<std::string> v = req.Query(name);
  return v && (*v == "1" || *v == "true" || *v == "yes");
}

Response NotFound(const Request& req) {
  return ErrorResponse(404, absl::StatusCode::kNotFound,
                       StrCat("no API endpoint ", req.method, " ", req.path));
}

Response MethodNotAllowed(const Request& req, const std::string& allow) {
  Response r = ErrorResponse(405, absl::StatusCode::kInvalidArgument,
                             StrCat(req.method, " ", req.path, ": use ", allow));
  r.headers.emplace_back("Allow", allow);
  return r;
}

#define LH_TRY_ASSIGN(lhs, expr)                                 \
  auto LH_CONCAT(lh_try_, __LINE__) = (expr);                    \
  if (!LH_CONCAT(lh_try_, __LINE__).ok()) {                      \
    return ErrorResponse(LH_CONCAT(lh_try_, __LINE__).status()); \
  }                                                              \
  lhs = std::move(LH_CONCAT(lh_try_, __LINE__)).value()

Response ListRuns(rpc::ClientApi* api, const Request& req, int64_t parent) {
  v1::ListRunsRequest q;
  q.set_status(req.Query("status").value_or(""));
  q.set_workflow(req.Query("workflow").value_or(""));
  q.set_page_token(req.Query("cursor").value_or(""));
  LH_TRY_ASSIGN(int64_t limit, IntParam(req, "limit", 50));
  q.set_limit(static_cast<int32_t>(std::clamp<int64_t>(limit, 1, kMaxRunsPage)));
  LH_TRY_ASSIGN(int64_t id, IntParam(req, "id", 0));
  q.set_id(id);
  if (parent == 0) {
    LH_TRY_ASSIGN(parent, IntParam(req, "parent", 0));
  }
  q.set_parent_run_id(parent);
  for (const std::string& p : req.QueryAll("param")) {
    size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      return ErrorResponse(absl::InvalidArgumentError(
          StrCat("query parameter 'param': '", p, "' is not NAME=VALUE")));
    }
    (*q.mutable_params())[p.substr(0, eq)] = p.substr(eq + 1);
  }
  for (const std::string& m : req.QueryAll("metric")) q.add_metrics(m);
  return Reply(api->ListRuns(q));
}

// One read of at most kMaxLogReadBytes (a larger max_bytes is clamped, as over gRPC), or with
// download=1 the log from `offset` to its end, read in pages of that size, as an attachment.
// The log a request names (run, stage, ?attempt=, ?stream=), to read from `offset`.
Result<v1::ReadLogRequest> LogRequest(const Request& req, int64_t run, const std::string& stage) {
  v1::ReadLogRequest q;
  q.set_run_id(run);
  q.set_stage(stage);
  q.set_stream(req.Query("stream").value_or("stdout"));
  Result<int64_t> attempt = IntParam(req, "attempt", 0);
  if (!attempt.ok()) return attempt.status();
  q.set_attempt(static_cast<int32_t>(*attempt));
  q.set_max_bytes(static_cast<int32_t>(kMaxLogReadBytes));
  return q;
}

Response ReadLog(rpc::ClientApi* api, const Request& req, int64_t run, const std::string& stage) {
  LH_TRY_ASSIGN(v1::ReadLogRequest q, LogRequest(req, run, stage));
  bool download = BoolParam(req, "download");
  LH_TRY_ASSIGN(int64_t offset, IntParam(req, "offset", download ? 0 : -kDefaultLogReadBytes));
  LH_TRY_ASSIGN(int64_t max_bytes,
                IntParam(req, "max_bytes", download ? kMaxLogReadBytes : kDefaultLogReadBytes));
  q.set_offset(offset);
  q.set_max_bytes(static_cast<int32_t>(ClampLogReadBytes(max_bytes)));
  LH_TRY_ASSIGN(v1::ReadLogResponse page, api->ReadLog(q));
  Response r;
  // Never text/html, and never sniffed as such: a log is shown as text, whatever it holds.
  r.content_type = "text/plain; charset=utf-8";
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.body = page.data();
  if (download) {
    // Page on until the end, up to a bound that keeps memory in check.
    q.set_attempt(page.attempt());
    while (!page.data().empty() && !page.finished() &&
           static_cast<int64_t>(r.body.size()) < kMaxDownloadBytes) {
      q.set_offset(page.next_offset());
      LH_TRY_ASSIGN(page, api->ReadLog(q));
      r.body += page.data();
    }
    r.headers.emplace_back("Content-Disposition",
                           StrCat("attachment; filename=\"run", run, "-", stage, "-attempt",
                                  page.attempt(), ".", q.stream(), ".log\""));
  }
  r.headers.emplace_back("X-Longhaul-Offset", std::to_string(download ? offset : page.offset()));
  r.headers.emplace_back("X-Longhaul-Next-Offset", std::to_string(page.next_offset()));
  r.headers.emplace_back("X-Longhaul-Finished", page.finished() ? "true" : "false");
  r.headers.emplace_back("X-Longhaul-Attempt", std::to_string(page.attempt()));
  return r;
}

// GET .../logs/search?q=TEXT&regex=1&icase=1&limit=100&offset=0: the log's lines that hold
// the pattern, from `offset` (a line start) on, read in pages of kMaxLogReadBytes; stops at the
// end of what the log holds now, after limit matches (`more`, `next_offset` where the next
// match starts) or after kMaxDownloadBytes read (`next_offset` where it stopped).
Response SearchLog(rpc::ClientApi* api, const Request& req, int64_t run, const std::string& stage) {
  LH_TRY_ASSIGN(v1::ReadLogRequest q, LogRequest(req, run, stage));
  LogPattern pattern{.text = req.Query("q").value_or(""),
                     .regex = BoolParam(req, "regex"),
                     .ignore_case = BoolParam(req, "icase")};
  LH_TRY_ASSIGN(LogLineMatcher matcher, LogLineMatcher::Make(pattern, "query parameter 'q'"));
  LH_TRY_ASSIGN(int64_t limit, IntParam(req, "limit", kDefaultLogMatches));
  limit = std::clamp<int64_t>(limit, 1, kMaxLogMatches);
  LH_TRY_ASSIGN(int64_t offset, IntParam(req, "offset", 0));
  q.set_offset(std::max<int64_t>(offset, 0));
  nlohmann::json matches = nlohmann::json::array();
  std::optional<int64_t> more_at;  // the offset of the first match past `limit`
  auto on_match = [&](int64_t at, std::string_view line) {
    if (more_at) return;
    if (static_cast<int64_t>(matches.size()) == limit) {
      more_at = at;
      return;
    }
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    bool cut = line.size() > kMaxMatchLineBytes;
    matches.push_back({{"offset", at},
                       {"line", std::string(line.substr(0, kMaxMatchLineBytes))},
                       {"truncated", cut}});
  };
  LogLineSearch search(std::move(matcher), q.offset());
  v1::ReadLogResponse page;
  int64_t read = 0;
  for (;;) {
    LH_TRY_ASSIGN(page, api->ReadLog(q));
    q.set_attempt(page.attempt());  // a retry that starts meanwhile is not mixed in
    search.Feed(page.data(), on_match);
    read += static_cast<int64_t>(page.data().size());
    q.set_offset(page.next_offset());
    if (more_at || page.data().empty() || page.finished() || read >= kMaxDownloadBytes) break;
  }
  bool at_end = !more_at && (page.data().empty() || page.finished());
  if (at_end) search.Finish(on_match);  // a last line without a newline counts too
  nlohmann::json body = {
      {"matches", std::move(matches)},
      {"more", more_at.has_value()},
      {"next_offset", more_at  ? *more_at
                      : at_end ? page.next_offset()
                               : search.pending_line()},
      {"searched_bytes", read},
      {"end_offset", page.next_offset()},
      {"finished", at_end && page.finished()},
      {"attempt", page.attempt()},
  };
  Response r;
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

// /runs/{id}/stages/{stage}/{what}
Response StageEndpoint(rpc::ClientApi* api, const Request& req, int64_t run,
                       const std::string& stage, const std::string& what) {
  if (req.method != "GET") return MethodNotAllowed(req, "GET");
  if (what == "attempts") {
    v1::ListAttemptsRequest q;
    q.set_run_id(run);
    q.set_stage(stage);
    return Reply(api->ListAttempts(q));
  }
  if (what == "metrics") {
    v1::ListMetricsRequest q;
    q.set_run_id(run);
    q.set_stage(stage);
    q.set_after(req.Query("after").value_or(""));
    LH_TRY_ASSIGN(int64_t limit, IntParam(req, "limit", 1000));
    q.set_limit(static_cast<int32_t>(std::clamp<int64_t>(limit, 1, 10000)));
    return Reply(api->ListMetrics(q));
  }
  if (what == "logs") return ReadLog(api, req, run, stage);
  if (what == "lineage") {
    v1::GetLineageRequest q;
    q.set_run_id(run);
    q.set_stage(stage);
    return Reply(api->GetLineage(q));
  }
  if (what == "gpus") {
    v1::ListGpuSeriesRequest q;
    q.set_run_id(run);
    q.set_stage(stage);
    return Reply(api->ListGpuSeries(q));
  }
  return NotFound(req);
}

Response ListEvents(rpc::ClientApi* api, const Request& req, int64_t run) {
  v1::ListEventsRequest q;
  q.set_run_id(run);
  q.set_stage(req.Query("stage").value_or(""));
  if (q.stage().empty()) {
    return ErrorResponse(
        absl::InvalidArgumentError(StrCat(req.path, ": query parameter 'stage' is required")));
  }
  q.set_type(req.Query("type").value_or(""));
  LH_TRY_ASSIGN(int64_t attempt, IntParam(req, "attempt", 0));
  LH_TRY_ASSIGN(int64_t after, IntParam(req, "after_seq", 0));
  LH_TRY_ASSIGN(int64_t limit, IntParam(req, "limit", 500));
  q.set_attempt(static_cast<int32_t>(attempt));
  q.set_after_seq(after);
  q.set_limit(static_cast<int32_t>(std::clamp<int64_t>(limit, 1, 10000)));
  return Reply(api->ListEvents(q));
}

// A mutation: parses the POST body into a `Msg`, lets `fill` set what the path says, makes
// the call and records it in the audit trail under the request's principal (as the gRPC
// service does), and answers with its result.
template <typename Msg, typename Resp, typename Fill>
Response Mutate(rpc::ClientApi* api, const Request& req, auth::Action action, Fill fill,
                Result<Resp> (rpc::ClientApi::*call)(const Msg&)) {
  Msg q;
  if (Status s = FromJson(req.body, "POST " + req.path + " body", &q); !s.ok()) {
    return ErrorResponse(s);
  }
  fill(q);
  return Reply(rpc::AuditedCall(api, req.principal, action, q, call));
}

// GET /runs/{id}/stages?limit=N&cursor=C&status=S...&name=X...&recent=1&attempts=1: one page
// of the run's stages (docs/api.md, "Paging stages").
Response ListStages(rpc::ClientApi* api, const Request& req, int64_t run) {
  if (req.method != "GET") return MethodNotAllowed(req, "GET");
  v1::ListStagesRequest q;
  q.set_run_id(run);
  LH_TRY_ASSIGN(int64_t limit, IntParam(req, "limit", 0));
  q.set_page_size(static_cast<int32_t>(std::clamp<int64_t>(limit, 0, kMaxStagesPerMessage)));
  q.set_page_token(req.Query("cursor").value_or(""));
  for (const std::string& name : req.QueryAll("status")) {
    std::optional<v1::StageStatus> status = ParseStageStatus(name);
    if (!status) {
      return ErrorResponse(absl::InvalidArgumentError(
          StrCat("query parameter 'status': '", name, "' is not a stage state")));
    }
    q.add_statuses(*status);
  }
  for (const std::string& name : req.QueryAll("name")) q.add_names(name);
  q.set_recent_first(BoolParam(req, "recent"));
  q.set_include_attempts(BoolParam(req, "attempts"));
  return Reply(api->ListStages(q));
}

// POST /runs/{id}/{action}
Response RunAction(rpc::ClientApi* api, const Request& req, int64_t run,
                   const std::string& action) {
  if (req.method != "POST") return MethodNotAllowed(req, "POST");
  if (action == "pivot") {
    return Mutate(
        api, req, auth::Action::kPivotRun,
        [&](auto& q) {
          q.set_run_id(run);
          *q.mutable_submitter() = rpc::SubmitterOf(req.principal);
        },
        &rpc::ClientApi::PivotRun);
  }
  if (action == "retry") {
    return Mutate(
        api, req, auth::Action::kRetryStage, [run](auto& q) { q.set_run_id(run); },
        &rpc::ClientApi::RetryStage);
  }
  if (action == "budget") {  // {"gpuHours": N}: admin, audited
    return Mutate(
        api, req, auth::Action::kSetRunBudget,
        [&](v1::SetRunBudgetRequest& q) {
          q.set_run_id(run);
          q.set_by(req.principal.name);
        },
        &rpc::ClientApi::SetRunBudget);
  }
  if (action == "priority") {  // {"priority": "high"}: --priority-allow, audited
    return Mutate(
        api, req, auth::Action::kSetRunPriority,
        [&](v1::SetRunPriorityRequest& q) {
          q.set_run_id(run);
          *q.mutable_submitter() = rpc::SubmitterOf(req.principal);
        },
        &rpc::ClientApi::SetRunPriority);
  }
  if (action == "cancel") {
    return Mutate(
        api, req, auth::Action::kCancelRun, [run](auto& q) { q.set_id(run); },
        &rpc::ClientApi::CancelRun);
  }
  return NotFound(req);
}

// POST /agents/{id}/gpus/{index|all}/{drain|undrain} {"reason": "..."}: DrainGpu, audited
// as the gRPC call is, with the caller's name on the GPU's record.
Response GpuAction(rpc::ClientApi* api, const Request& req, const std::vector<std::string>& seg) {
  if (seg[4] != "drain" && seg[4] != "undrain") return NotFound(req);
  if (req.method != "POST") return MethodNotAllowed(req, "POST");
  int64_t gpu = -1;
  if (seg[3] != "all") {
    LH_TRY_ASSIGN(gpu, ParseInt(seg[3], StrCat("GPU index in ", req.path)));
    if (gpu < 0 || gpu > INT32_MAX) {
      return ErrorResponse(absl::InvalidArgumentError(
          StrCat("GPU index in ", req.path, ": '", seg[3], "' is not a GPU index or 'all'")));
    }
  }
  bool undrain = seg[4] == "undrain";
  std::string who = req.principal.name;
  return Mutate(
      api, req, auth::Action::kDrainGpu,
      [&](v1::DrainGpuRequest& q) {
        q.set_agent_id(seg[1]);
        q.set_gpu(static_cast<int32_t>(gpu));
        q.set_undrain(undrain);
        q.set_by(who);
      },
      &rpc::ClientApi::DrainGpu);
}

// POST /agents/{id}/{drain|undrain} {"atMs": N, "reason": "..."}: DrainAgent, audited as the
// gRPC call is (atMs 0 or absent: now).
Response AgentAction(rpc::ClientApi* api, const Request& req, const std::vector<std::string>& seg) {
  if (seg[2] != "drain" && seg[2] != "undrain") return NotFound(req);
  if (req.method != "POST") return MethodNotAllowed(req, "POST");
  bool undrain = seg[2] == "undrain";
  std::string who = req.principal.name;
  return Mutate(
      api, req, auth::Action::kDrainAgent,
      [&](v1::DrainAgentRequest& q) {
        q.set_agent_id(seg[1]);
        q.set_undrain(undrain);
        q.set_by(who);
      },
      &rpc::ClientApi::DrainAgent);
}

// GET /reservations?all=1: current and future ones (all: ended and cancelled too); POST
// /reservations {"agent_id","gpus","all_gpus","holder_kind","holder","from_ms","until_ms",
// "reason"}: Reserve; DELETE /reservations/{id} {"reason"}: Unreserve. Both admin, audited.
Response Reservations(rpc::ClientApi* api, const Request& req,
                      const std::vector<std::string>& seg) {
  if (seg.size() == 2) {
    if (req.method != "DELETE") return MethodNotAllowed(req, "DELETE");
    LH_TRY_ASSIGN(int64_t id, ParseInt(seg[1], StrCat("reservation id in ", req.path)));
    return Mutate(
        api, req, auth::Action::kUnreserve,
        [&](v1::UnreserveRequest& q) {
          q.set_id(id);
          q.set_by(req.principal.name);
        },
        &rpc::ClientApi::Unreserve);
  }
  if (req.method == "POST") {
    return Mutate(
        api, req, auth::Action::kReserve,
        [&](v1::ReserveRequest& q) { q.set_by(req.principal.name); }, &rpc::ClientApi::Reserve);
  }
  if (req.method != "GET") return MethodNotAllowed(req, "GET, POST");
  v1::ListReservationsRequest q;
  q.set_all(BoolParam(req, "all"));
  return Reply(api->ListReservations(q));
}

// GET /tags?run=ID: the tags (of one run's stages); POST /tags {"name", "run_id", "stage",
// "force"}: SetTag; DELETE /tags/{name}: RemoveTag. Both audited, with the caller's name.
Response Tags(rpc::ClientApi* api, const Request& req, const std::vector<std::string>& seg) {
  if (seg.size() == 2) {
    if (req.method != "DELETE") return MethodNotAllowed(req, "DELETE");
    v1::RemoveTagRequest q;
    q.set_name(seg[1]);
    return Reply(rpc::AuditedCall(api, req.principal, auth::Action::kRemoveTag, q,
                                  &rpc::ClientApi::RemoveTag));
  }
  if (req.method == "POST") {
    return Mutate(
        api, req, auth::Action::kSetTag,
        [&](v1::SetTagRequest& q) { q.set_by(req.principal.name); }, &rpc::ClientApi::SetTag);
  }
  if (req.method != "GET") return MethodNotAllowed(req, "GET, POST");
  v1::ListTagsRequest q;
  LH_TRY_ASSIGN(int64_t run, IntParam(req, "run", 0));
  q.set_run_id(run);
  return Reply(api->ListTags(q));
}

// GET /quotas: every account's quota and use; POST /quotas {"team", "gpus", "borrow",
// "gpu_hours", "period"}: SetQuota; DELETE /quotas/{team}: RemoveQuota. Both audited, with
// the caller's name.
Response QuotasRoute(rpc::ClientApi* api, const Request& req, const std::vector<std::string>& seg) {
  if (seg.size() == 2) {
    if (req.method != "DELETE") return MethodNotAllowed(req, "DELETE");
    v1::RemoveQuotaRequest q;
    q.set_team(seg[1]);
    q.set_by(req.principal.name);
    return Reply(rpc::AuditedCall(api, req.principal, auth::Action::kRemoveQuota, q,
                                  &rpc::ClientApi::RemoveQuota));
  }
  if (req.method == "POST") {
    return Mutate(
        api, req, auth::Action::kSetQuota,
        [&](v1::SetQuotaRequest& q) { q.set_by(req.principal.name); }, &rpc::ClientApi::SetQuota);
  }
  if (req.method != "GET") return MethodNotAllowed(req, "GET, POST");
  return Reply(api->ListQuotas(v1::ListQuotasRequest()));
}

// GET /audit?limit=50&before=ID: the audit trail, newest first.
Response ListAudit(rpc::ClientApi* api, const Request& req) {
  if (req.method != "GET") return MethodNotAllowed(req, "GET");
  v1::ListAuditRequest q;
  LH_TRY_ASSIGN(int64_t limit, IntParam(req, "limit", 50));
  q.set_limit(static_cast<int32_t>(std::clamp<int64_t>(limit, 1, 1000)));
  LH_TRY_ASSIGN(int64_t before, IntParam(req, "before", 0));
  q.set_before_id(before);
  return Reply(api->ListAudit(q));
}

Response Runs(rpc::ClientApi* api, const Request& req, const std::vector<std::string>& seg) {
  if (seg.size() == 1) {
    if (req.method == "GET") return ListRuns(api, req, 0);
    if (req.method != "POST") return MethodNotAllowed(req, "GET, POST");
    return Mutate(
        api, req, auth::Action::kSubmitRun,
        [&](auto& q) { *q.mutable_submitter() = rpc::SubmitterOf(req.principal); },
        &rpc::ClientApi::SubmitRun);
  }
  LH_TRY_ASSIGN(int64_t run, ParseInt(seg[1], StrCat("run id in ", req.path)));
  if (seg.size() == 2) {
    if (req.method != "GET") return MethodNotAllowed(req, "GET");
    v1::GetRunRequest q;
    q.set_id(run);
    q.set_include_attempts(BoolParam(req, "attempts"));
    // ?stages=N: at most N stages (0, the default: one full page; -1: only the counts).
    LH_TRY_ASSIGN(int64_t stages, IntParam(req, "stages", 0));
    q.set_stage_limit(static_cast<int32_t>(std::clamp<int64_t>(stages, -1, kMaxStagesPerMessage)));
    // ?workflow_text=1: with the workflow file as submitted (the UI's "New run" starts from it).
    q.set_include_workflow_text(BoolParam(req, "workflow_text"));
    return Reply(api->GetRun(q));
  }
  if (seg.size() == 3 && seg[2] == "stages") return ListStages(api, req, run);
  if (seg.size() == 3 && seg[2] == "children") {
    if (req.method != "GET") return MethodNotAllowed(req, "GET");
    return ListRuns(api, req, run);
  }
  if (seg.size() == 3 && seg[2] == "events") {
    if (req.method != "GET") return MethodNotAllowed(req, "GET");
    return ListEvents(api, req, run);
  }
  if (seg.size() == 3) return RunAction(api, req, run, seg[2]);
  if (seg.size() == 4 && seg[2] == "sweeps") {
    // GET /runs/{id}/sweeps/{stage}?metric=NAME&series=1
    if (req.method != "GET") return MethodNotAllowed(req, "GET");
    v1::GetSweepRequest q;
    q.set_run_id(run);
    q.set_stage(seg[3]);
    q.set_metric(req.Query("metric").value_or(""));
    q.set_include_series(BoolParam(req, "series"));
    return Reply(api->GetSweep(q));
  }
  if (seg.size() == 5 && seg[2] == "stages") return StageEndpoint(api, req, run, seg[3], seg[4]);
  if (seg.size() == 6 && seg[2] == "stages" && seg[4] == "logs" && seg[5] == "search") {
    if (req.method != "GET") return MethodNotAllowed(req, "GET");
    return SearchLog(api, req, run, seg[3]);
  }
  return NotFound(req);
}

// GET /whoami: who the request's token is and what its role allows, so the UI can say why a
// button is off before the server refuses it. Without --tokens every caller is an admin.
Response WhoAmI(const Request& req) {
  if (req.method != "GET") return MethodNotAllowed(req, "GET");
  auto may = [&](auth::Action a) { return req.principal.role >= auth::RequiredRole(a); };
  nlohmann::json body = {
      {"name", req.principal.name},
      {"role", std::string(auth::RoleName(req.principal.role))},
      {"can_submit", may(auth::Action::kSubmitRun)},
      {"can_admin", may(auth::Action::kListAudit)},
  };
  Response r;
  r.body = body.dump();
  return r;
}

}  // namespace

Response HandleApi(rpc::ClientApi* api, const Request& req,
                   const std::vector<std::string>& segments) {
  if (segments.empty()) return NotFound(req);
  if (segments[0] == "runs") return Runs(api, req, segments);
  if (segments[0] == "audit" && segments.size() == 1) return ListAudit(api, req);
  if (segments[0] == "tags" && segments.size() <= 2) return Tags(api, req, segments);
  if (segments[0] == "reservations" && segments.size() <= 2) {
    return Reservations(api, req, segments);
  }
  if (segments[0] == "whoami" && segments.size() == 1) return WhoAmI(req);
  if (segments[0] == "metric-series" && segments.size() == 1) return MetricSeries(api, req);
  if (segments[0] == "agents" && segments.size() == 1) {
    if (req.method != "GET") return MethodNotAllowed(req, "GET");
    return Reply(api->ListAgents());
  }
  if (segments[0] == "agents" && segments.size() == 3) return AgentAction(api, req, segments);
  if (segments[0] == "budgets" && segments.size() == 3) {
    // DELETE /budgets/{scope}/{name}: RemoveBudget (admin, audited).
    if (req.method != "DELETE") return MethodNotAllowed(req, "DELETE");
    v1::RemoveBudgetRequest q;
    q.set_scope(segments[1]);
    q.set_name(segments[2]);
    q.set_by(req.principal.name);
    return Reply(rpc::AuditedCall(api, req.principal, auth::Action::kRemoveBudget, q,
                                  &rpc::ClientApi::RemoveBudget));
  }
  if (segments[0] == "quotas" && segments.size() <= 2) return QuotasRoute(api, req, segments);
  if (segments[0] == "budgets" && segments.size() == 1) {
    // GET: every team and workflow budget; POST {"scope","name","gpu_hours","hard",
    // "period_ms"}: SetBudget (admin, audited).
    if (req.method == "GET") return Reply(api->ListBudgets(v1::ListBudgetsRequest()));
    if (req.method != "POST") return MethodNotAllowed(req, "GET, POST");
    return Mutate(
        api, req, auth::Action::kSetBudget,
        [&](v1::SetBudgetRequest& q) { q.set_by(req.principal.name); }, &rpc::ClientApi::SetBudget);
  }
  if (segments[0] == "agents" && segments.size() == 5 && segments[2] == "gpus") {
    return GpuAction(api, req, segments);
  }
  return NotFound(req);
}

}  // namespace longhaul::http
