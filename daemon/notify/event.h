// What a notification says: one run, stage or agent event (docs/operations.md,
// "Notifications"), and the two bodies it is sent as: the event's JSON and Slack's
// {"text": ...}.
#pragma once

#include <cstdint>
#include <string>

namespace longhaul::notify {

struct Event {
  std::string kind;  // one of workflow::kNotifyEvents
  int64_t run_id = 0;  // 0: not about a run (agent_lost)
  std::string workflow;
  std::string stage;  // "" for run and agent events
  int attempt = 0;    // 0: none
  std::string agent;  // the agent concerned, when one is
  std::string reason;
  int64_t time_ms = 0;
};

// {"kind","run_id","workflow","stage","attempt","agent","reason","time","url"}: time in RFC
// 3339 UTC; url the UI's page of the run ("" when `ui_base` is empty or there is no run).
std::string EventJson(const Event& e, const std::string& ui_base);
// {"text": "longhaul: run 12 (eagle3) failed: datagen failed <url|run 12>"}.
std::string SlackJson(const Event& e, const std::string& ui_base);
// "http://host:8080/#/runs/12", or "" without a base or a run.
std::string RunUrl(const std::string& ui_base, int64_t run_id);

}  // namespace longhaul::notify
