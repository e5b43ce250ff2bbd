#include "daemon/rpc/client_audit.h"

#include <map>

#include "absl/time/time.h"
#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/rpc/client_api.h"
#include "daemon/store/backup.h"

namespace longhaul::rpc {
namespace {

constexpr size_t kMaxValue = 200;
constexpr size_t kMaxDetail = 2048;

std::string Cut(std::string s, size_t max) {
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

// "k=v k2=v2" in key order; each value cut to kMaxValue.
std::string Params(const google::protobuf::Map<std::string, std::string>& params) {
  std::map<std::string, std::string> sorted(params.begin(), params.end());
  std::string out;
  for (const auto& [k, v] : sorted) {
    if (!out.empty()) out += " ";
    out += StrCat(k, "=", Cut(v, kMaxValue));
  }
  return out;
}

std::string Join(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) {
    if (p.empty()) continue;
    if (!out.empty()) out += "; ";
    out += p;
  }
  return Cut(out, kMaxDetail);
}

std::string RunTarget(const v1::SubmitRunResponse& resp) {
  return resp.run().id() > 0 ? StrCat("run ", resp.run().id()) : "";
}

}  // namespace

AuditSubject DescribeForAudit(const v1::SubmitRunRequest& req, const v1::SubmitRunResponse& resp) {
  return {
      RunTarget(resp),
      Join({StrCat("workflow ", req.workflow_path().empty() ? "<submitted>" : req.workflow_path()),
            req.params().empty() ? "" : StrCat("params ", Params(req.params())),
            req.dry_run() ? "dry run" : "", req.no_cache() ? "no cache" : "",
            req.priority().empty() ? "" : StrCat("priority ", req.priority()),
            req.budget_gpu_hours() > 0 ? StrCat("budget ", req.budget_gpu_hours(), " GPU-h") : ""})};
}

AuditSubject DescribeForAudit(const v1::PivotRunRequest& req, const v1::SubmitRunResponse& resp) {
  return {RunTarget(resp),
          Join({StrCat("pivot of run ", req.run_id()),
                req.params().empty() ? "" : StrCat("params ", Params(req.params())),
                req.from_stage().empty() ? "" : StrCat("from ", req.from_stage()),
                req.dry_run() ? "dry run" : "", req.no_cache() ? "no cache" : ""})};
}

AuditSubject DescribeForAudit(const v1::CancelRunRequest& req, const v1::Run&) {
  return {StrCat("run ", req.id()), ""};
}

AuditSubject DescribeForAudit(const v1::GcRequest& req, const v1::GcResponse& resp) {
  std::string runs;
  for (const auto& r : resp.runs()) runs += StrCat(runs.empty() ? "" : ",", r.run_id());
  return {req.dry_run() ? "retention (dry run)" : "retention",
          Cut(StrCat("policy: ", resp.policy(), "; runs: ", runs.empty() ? "none" : runs,
                          "; bytes: ", resp.bytes(), "; events: ", resp.events()), kMaxDetail)};
}

AuditSubject DescribeForAudit(const v1::RetryStageRequest& req, const v1::Run&) {
  return {req.stage().empty() ? StrCat("run ", req.run_id())
                              : StrCat("run ", req.run_id(), " stage ", req.stage()),
          ""};
}

AuditSubject DescribeForAudit(const v1::BackupRequest& req, const v1::BackupResponse& resp) {
  return {Cut(req.path(), kMaxValue),
          resp.pages() > 0 ? StrCat(resp.pages(), " pages, ", resp.bytes(), " bytes") : ""};
}

AuditSubject DescribeForAudit(const v1::DrainGpuRequest& req, const v1::DrainGpuResponse&) {
  return {Cut(StrCat("agent ", req.agent_id(), req.gpu() < 0 ? " every GPU" : StrCat(" GPU ", req.gpu())),
              kMaxValue),
          Cut(StrCat(req.undrain() ? "undrain" : "drain",
                     req.reason().empty() ? "" : StrCat(": ", req.reason())),
              kMaxDetail)};
}

AuditSubject DescribeForAudit(const v1::DrainAgentRequest& req,
                              const v1::DrainAgentResponse& resp) {
  std::string what = "undrain";
  if (!req.undrain()) {
    // The time as stored (a time past is now), else as asked.
    int64_t at = resp.agent().has_drain() ? resp.agent().drain().at_ms() : req.at_ms();
    absl::Time t = absl::FromUnixMillis(at);
    what = at > 0
               ? StrCat("drain at ", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone()))
               : "drain now";
  }
  return {Cut(StrCat("agent ", req.agent_id()), kMaxValue),
          Cut(StrCat(what, req.reason().empty() ? "" : StrCat(": ", req.reason())), kMaxDetail)};
}

AuditSubject DescribeForAudit(const v1::ReserveRequest& req, const v1::Reservation& resp) {
  auto at = [](int64_t ms) {
    return ms > 0 ? absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(ms),
                                     absl::UTCTimeZone())
                  : std::string("now");
  };
  // As stored (the GPU count of `all`, a start past is now), else as asked.
  bool stored = resp.id() > 0;
  std::string gpus = stored ? StrCat(resp.gpus()) : req.all_gpus() ? "all" : StrCat(req.gpus());
  std::string what =
      StrCat(gpus, " GPUs for ", req.holder_kind(), " ", req.holder(), " from ",
             at(stored ? resp.from_ms() : req.from_ms()), " until ", at(req.until_ms()));
  return {Cut(StrCat("agent ", req.agent_id()), kMaxValue),
          Cut(StrCat(stored ? StrCat("reservation ", resp.id(), ": ") : "", what,
                     req.reason().empty() ? "" : StrCat(": ", req.reason())),
              kMaxDetail)};
}

AuditSubject DescribeForAudit(const v1::UnreserveRequest& req, const v1::Reservation& resp) {
  // A reservation not found has no agent to name.
  std::string target = resp.agent_id().empty() ? StrCat("reservation ", req.id())
                                               : StrCat("agent ", resp.agent_id());
  return {Cut(target, kMaxValue),
          Cut(StrCat("cancel reservation ", req.id(),
                     req.reason().empty() ? "" : StrCat(": ", req.reason())),
              kMaxDetail)};
}

AuditSubject DescribeForAudit(const v1::SetRunBudgetRequest& req, const v1::Run& resp) {
  std::string used =
      resp.has_budget() ? StrCat(" (", resp.budget().used_gpu_hours(), " used)") : std::string();
  return {StrCat("run ", req.run_id()), StrCat("budget ", req.gpu_hours(), " GPU-h", used)};
}

AuditSubject DescribeForAudit(const v1::SetRunPriorityRequest& req, const v1::Run&) {
  return {StrCat("run ", req.run_id()), Cut(StrCat("class ", req.priority()), kMaxDetail)};
}

AuditSubject DescribeForAudit(const v1::SetTagRequest& req, const v1::Tag& resp) {
  std::string moved = resp.previous().empty() ? "" : StrCat(" (moved from ", resp.previous(), ")");
  return {Cut(StrCat("tag ", req.name()), kMaxValue),
          Cut(StrCat("run ", req.run_id(), " ", req.stage(), moved), kMaxDetail)};
}

AuditSubject DescribeForAudit(const v1::RemoveTagRequest& req, const v1::Tag& resp) {
  return {Cut(StrCat("tag ", req.name()), kMaxValue),
          resp.previous().empty() ? "" : StrCat("was on ", resp.previous())};
}

AuditSubject DescribeForAudit(const v1::SetBudgetRequest& req, const v1::ScopeBudget& resp) {
  return {Cut(StrCat(req.scope(), " ", req.name()), kMaxValue),
          StrCat("budget ", req.gpu_hours(), " GPU-h for ", FormatWholeDurationMs(resp.period_ms()),
                 req.hard() ? ", hard" : "", " (", resp.used_gpu_hours(), " used)")};
}

AuditSubject DescribeForAudit(const v1::RemoveBudgetRequest& req, const v1::ScopeBudget& resp) {
  return {Cut(StrCat(req.scope(), " ", req.name()), kMaxValue),
          resp.name().empty()
              ? ""
              : StrCat("was ", resp.gpu_hours(), " GPU-h for ",
                       FormatWholeDurationMs(resp.period_ms()), resp.hard() ? ", hard" : "")};
}

AuditSubject DescribeForAudit(const v1::SetQuotaRequest& req, const v1::Quota& resp) {
  return {Cut(StrCat("team ", req.team()), kMaxValue),
          resp.rule().empty() ? "" : StrCat("quota ", resp.rule())};
}

AuditSubject DescribeForAudit(const v1::RemoveQuotaRequest& req, const v1::Quota& resp) {
  return {Cut(StrCat("team ", req.team()), kMaxValue),
          resp.rule().empty() ? "" : StrCat("was ", resp.rule(), ", set by ", resp.set_by())};
}

Result<v1::BackupResponse> ClientApi::Backup(const v1::BackupRequest& req) {
  ASSIGN_OR_RETURN(store::BackupResult b, store::BackupDatabase(store_->path(), req.path()));
  GetLogger("rpc")->info("backup of {} to {}: {} pages, {} bytes, copy {} ms, check {} ms",
                         store_->path(), b.path, b.pages, b.bytes, b.copy_ms, b.check_ms);
  v1::BackupResponse resp;
  resp.set_path(b.path);
  resp.set_pages(b.pages);
  resp.set_page_size(b.page_size);
  resp.set_bytes(b.bytes);
  resp.set_schema_version(b.schema_version);
  resp.set_copy_ms(b.copy_ms);
  resp.set_check_ms(b.check_ms);
  resp.set_total_ms(b.total_ms);
  return resp;
}

Result<v1::ListAuditResponse> ClientApi::ListAudit(const v1::ListAuditRequest& req) {
  return store_->ListAudit(req);
}

void ClientApi::Audit(const auth::Principal& who, auth::Action action,
                      const AuditSubject& subject, const Status& status) {
  v1::AuditEntry e;
  e.set_ts_ms(clock_->NowMs());
  e.set_principal(who.name);
  e.set_role(std::string(auth::RoleName(who.role)));
  e.set_peer(who.peer);
  e.set_action(std::string(auth::ActionMethod(action)));
  e.set_target(subject.target);
  e.set_detail(subject.detail);
  e.set_result(status.ok() ? "OK"
                           : Cut(StrCat(absl::StatusCodeToString(status.code()), ": ",
                                        status.message()),
                                 kMaxDetail));
  loop_->Post([store = store_, e = std::move(e)] {
    Status s = store->InsertAudit(e);
    if (!s.ok()) {
      GetLogger("rpc")->error("audit entry not stored ({} {} by {} from {}): {}", e.action(),
                              e.target(), e.principal(), e.peer(), ToStd(s.message()));
    }
  });
}

}  // namespace longhaul::rpc
