#include "daemon/http/token_authorizer.h"

#include "core/logging.h"
#include "core/strings.h"

namespace longhaul::http {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::optional<auth::Action> ActionOf(const Request& request) {
  const std::string& p = request.path;
  // /metrics names runs and stages: a viewer's read, like GET /api/v1/runs.
  if (p == "/metrics") return auth::Action::kListRuns;
  if (p.rfind("/api/", 0) != 0) return std::nullopt;
  // Login checks the token it is given by itself; healthz tells nothing.
  if (p == "/api/v1/healthz" || p == "/api/v1/login" || p == "/api/v1/logout") return std::nullopt;
  if (request.method != "GET" && request.method != "HEAD") {
    if (EndsWith(p, "/pivot")) return auth::Action::kPivotRun;
    if (EndsWith(p, "/retry")) return auth::Action::kRetryStage;
    if (EndsWith(p, "/cancel")) return auth::Action::kCancelRun;
    if (EndsWith(p, "/budget")) return auth::Action::kSetRunBudget;
    if (EndsWith(p, "/priority")) return auth::Action::kSetRunPriority;
    if (p.rfind("/api/v1/tags", 0) == 0) {
      return request.method == "DELETE" ? auth::Action::kRemoveTag : auth::Action::kSetTag;
    }
    if (p == "/api/v1/budgets") return auth::Action::kSetBudget;
    if (p.rfind("/api/v1/reservations", 0) == 0) {
      return request.method == "DELETE" ? auth::Action::kUnreserve : auth::Action::kReserve;
    }
    if (p.rfind("/api/v1/budgets/", 0) == 0) return auth::Action::kRemoveBudget;
    if (p == "/api/v1/quotas") return auth::Action::kSetQuota;
    if (p.rfind("/api/v1/quotas/", 0) == 0) return auth::Action::kRemoveQuota;
    if (p.rfind("/api/v1/agents/", 0) == 0 && (EndsWith(p, "/drain") || EndsWith(p, "/undrain"))) {
      // /api/v1/agents/{id}/drain: the agent's; with /gpus/ in it: GPUs'.
      if (p.find("/gpus/") == std::string::npos) return auth::Action::kDrainAgent;
      return auth::Action::kDrainGpu;
    }
    // POST /api/v1/runs, and any other method or path: the strictest run mutation.
    return auth::Action::kSubmitRun;
  }
  if (p.rfind("/api/v1/agents", 0) == 0) return auth::Action::kListAgents;
  if (p.rfind("/api/v1/audit", 0) == 0) return auth::Action::kListAudit;
  if (p.rfind("/api/v1/tags", 0) == 0) return auth::Action::kListTags;
  if (p == "/api/v1/budgets") return auth::Action::kListBudgets;
  if (p == "/api/v1/reservations") return auth::Action::kListReservations;
  if (p == "/api/v1/quotas") return auth::Action::kListQuotas;
  if (EndsWith(p, "/watch")) return auth::Action::kWatchRun;
  if (EndsWith(p, "/logs")) return auth::Action::kReadLog;
  if (EndsWith(p, "/events")) return auth::Action::kListEvents;
  if (EndsWith(p, "/metrics")) return auth::Action::kListMetrics;
  if (EndsWith(p, "/attempts")) return auth::Action::kListAttempts;
  if (EndsWith(p, "/gpus")) return auth::Action::kListMetrics;
  if (p == "/api/v1/runs" || EndsWith(p, "/children")) return auth::Action::kListRuns;
  return auth::Action::kGetRun;
}

std::string RequestToken(const Request& request) {
  std::string bearer = auth::BearerToken(request.Header("authorization"));
  if (!bearer.empty()) return bearer;
  std::string cookies = request.Header("cookie");
  constexpr std::string_view kName = "longhaul_token=";
  size_t i = 0;
  while (i < cookies.size()) {
    while (i < cookies.size() && (cookies[i] == ' ' || cookies[i] == ';')) ++i;
    size_t end = cookies.find(';', i);
    if (end == std::string::npos) end = cookies.size();
    if (cookies.compare(i, kName.size(), kName) == 0) {
      return cookies.substr(i + kName.size(), end - i - kName.size());
    }
    i = end;
  }
  return "";
}

Result<auth::Principal> TokenHttpAuthorizer::Authorize(const Request& request) const {
  std::optional<auth::Action> action = ActionOf(request);
  if (!action) return auth::Principal{"", auth::Role::kViewer, request.peer, ""};
  Result<auth::Principal> who =
      authorizer_->Authorize(RequestToken(request), request.peer, *action);
  if (!who.ok()) {
    GetLogger("http")->warn("{} {} from {}: {}", request.method, request.path,
                            request.peer.empty() ? "?" : request.peer,
                            ToStd(who.status().message()));
  }
  return who;
}

}  // namespace longhaul::http
