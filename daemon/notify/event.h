// What a notification says: one run, stage or agent event (docs/operations.md,
// "Notifications"), and the two bodies it is sent as: the event's JSON and Slack's
// {"text": ...}.
#pragma once

#include <cstdint>
#include <string>

namespace longhaul::notify {

struct Event {
  std::string kind;    // one of workflow::kNotifyEvents
  int64_t run_id = 0;  // 0: not about a run (agent_lost, a team's or workflow's budget)
  std::string workflow;
  std::string stage;  // "" for run and agent events
  int attempt = 0;    // 0: none
  std::string agent;  // the agent concerned: where the attempt ran, the agent lost; "" for runs
  std::string reason;
  int64_t time_ms = 0;
};

// {"kind","run_id","workflow","stage","attempt","agent","reason","time","url"}: time in RFC
// 3339 UTC; url the UI's page of what the event is about (EventUrl).
std::string EventJson(const Event& e, const std::string& ui_base);
// {"text": "longhaul: stage datagen of run 12 (eagle3) failed on gpu-01: exit 3
// <url|stage datagen>"}.
std::string SlackJson(const Event& e, const std::string& ui_base);
// The UI's page of what `e` is about, under `ui_base` ("http://host:8080"): the stage's page
// for a stage event ("/#/runs/12/stages/datagen"), the run's for a run event ("/#/runs/12"),
// the agents page for an agent event ("/#/agents"), else the UI's first page ("/"). "" without
// a base.
std::string EventUrl(const Event& e, const std::string& ui_base);

}  // namespace longhaul::notify
