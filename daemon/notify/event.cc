#include "daemon/notify/event.h"

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/strings.h"

namespace longhaul::notify {
namespace {

std::string Rfc3339(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms % 1000));
  return out;
}

// "run 12 (eagle3) failed", "stage datagen of run 12 (eagle3) failed on gpu-01", "agent n1
// lost": what happened and where, first.
std::string Headline(const Event& e) {
  std::string run =
      StrCat("run ", e.run_id, e.workflow.empty() ? "" : StrCat(" (", e.workflow, ")"));
  if (e.kind == "run_succeeded") return StrCat(run, " succeeded");
  if (e.kind == "run_failed") return StrCat(run, " failed");
  if (e.kind == "run_cancelled") return StrCat(run, " was cancelled");
  if (e.kind == "agent_lost") return StrCat("agent ", e.agent, " lost");
  // A team's or a workflow's budget (no run): the reason names it.
  if (e.kind == "budget_warning" && e.run_id == 0) return "80 % of a GPU-hour budget used";
  if (e.kind == "budget_reached" && e.run_id == 0) return "a GPU-hour budget was reached";
  if (e.kind == "budget_warning") return StrCat(run, " used 80 % of its GPU-hour budget");
  if (e.kind == "budget_reached") return StrCat(run, " reached its GPU-hour budget: paused");
  if (e.kind == "gpu_fault" && e.run_id == 0) return StrCat("GPU fault on ", e.agent);
  if (e.kind == "gpu_fault") {
    return StrCat("GPU fault on ", e.agent, ": stage ", e.stage, " of ", run, " attempt ",
                  e.attempt, " stopped");
  }
  std::string on = e.agent.empty() ? "" : StrCat(" on ", e.agent);
  std::string stage = StrCat("stage ", e.stage, " of ", run);
  if (e.kind == "stage_failed") return StrCat(stage, " failed", on);
  if (e.kind == "stage_gpu_idle") return StrCat(stage, ": its GPUs are idle", on);
  if (e.kind == "stage_stalled") return StrCat(stage, " stalled", on, " (attempt ", e.attempt, ")");
  if (e.kind == "service_lost") return StrCat("service ", e.stage, " of ", run, " was lost", on);
  return StrCat(e.kind, ": ", run);  // "test" and future kinds
}

// The words of the Slack link: "stage datagen", "run 12", "agents".
std::string LinkText(const Event& e) {
  if (e.run_id > 0 && !e.stage.empty()) return StrCat("stage ", e.stage);
  if (e.run_id > 0) return StrCat("run ", e.run_id);
  return e.agent.empty() ? "longhaul" : "agents";
}

// Slack reads &, < and > in text as markup (links, mentions): they are escaped as it asks.
std::string SlackEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string EventUrl(const Event& e, const std::string& ui_base) {
  if (ui_base.empty()) return "";
  std::string base = ui_base;
  while (!base.empty() && base.back() == '/') base.pop_back();
  // Stage names are letters, digits, _ and -: nothing in them needs escaping in a URL.
  if (e.run_id > 0 && !e.stage.empty()) {
    return StrCat(base, "/#/runs/", e.run_id, "/stages/", e.stage);
  }
  if (e.run_id > 0) return StrCat(base, "/#/runs/", e.run_id);
  if (!e.agent.empty()) return StrCat(base, "/#/agents");
  return StrCat(base, "/");
}

std::string EventJson(const Event& e, const std::string& ui_base) {
  nlohmann::ordered_json j;
  j["kind"] = e.kind;
  j["run_id"] = e.run_id;
  j["workflow"] = e.workflow;
  j["stage"] = e.stage;
  j["attempt"] = e.attempt;
  j["agent"] = e.agent;
  j["reason"] = e.reason;
  j["time"] = Rfc3339(e.time_ms);
  j["url"] = EventUrl(e, ui_base);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string SlackJson(const Event& e, const std::string& ui_base) {
  std::string text = StrCat("longhaul: ", SlackEscape(Headline(e)));
  if (!e.reason.empty()) text += StrCat(": ", SlackEscape(e.reason));
  std::string url = EventUrl(e, ui_base);
  if (!url.empty()) text += StrCat(" <", url, "|", SlackEscape(LinkText(e)), ">");
  nlohmann::json j;
  j["text"] = text;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace longhaul::notify
