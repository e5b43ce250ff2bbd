#include "daemon/store/row_codec.h"

#include <nlohmann/json.hpp>

#include "daemon/store/query.h"
#include "proto/state_names.h"

namespace longhaul::store::internal {

using nlohmann::json;

std::string MapToJson(const std::map<std::string, std::string>& m) {
  if (m.empty()) return "{}";  // most rows: no tree to build
  json j = json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::map<std::string, std::string> JsonToMap(const std::string& text) {
  std::map<std::string, std::string> out;
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    out[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
  }
  return out;
}

std::string StringsToJson(const std::vector<std::string>& v) {
  return v.empty() ? std::string("[]") : json(v).dump();
}

std::vector<std::string> JsonToStrings(const std::string& text) {
  std::vector<std::string> out;
  json j = json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    if (e.is_string()) out.push_back(e.get<std::string>());
  }
  return out;
}

std::string ProgressToJson(const ProgressRow& p) {
  json j = {{"done", p.done}, {"total", p.total},        {"unit", p.unit},
            {"rate", p.rate}, {"eta", p.eta_seconds}, {"updated", p.updated_at_ms}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<ProgressRow> JsonToProgress(const std::string& text) {
  if (text.empty()) return std::nullopt;
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  ProgressRow p;
  p.done = j.value("done", 0.0);
  p.total = j.value("total", 0.0);
  p.unit = j.value("unit", "");
  p.rate = j.value("rate", 0.0);
  p.eta_seconds = j.value("eta", -1.0);
  p.updated_at_ms = j.value("updated", int64_t{0});
  return p;
}

std::string ResourcesToJson(const v1::Resources& r) {
  // The stages of a run mostly ask for the same: the last answer is kept per thread, so a
  // 100,000-stage submission builds the JSON once, not once per stage.
  thread_local v1::Resources last;
  thread_local std::string last_json;
  if (last_json.empty() || r.cpus() != last.cpus() || r.memory_bytes() != last.memory_bytes() ||
      r.gpus() != last.gpus()) {
    last_json =
        json{{"cpus", r.cpus()}, {"memory_bytes", r.memory_bytes()}, {"gpus", r.gpus()}}.dump();
    last = r;
  }
  return last_json;
}

v1::Resources JsonToResources(const std::string& text) {
  v1::Resources r;
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return r;
  r.set_cpus(j.value("cpus", 0.0));
  r.set_memory_bytes(j.value("memory_bytes", int64_t{0}));
  r.set_gpus(j.value("gpus", 0));
  return r;
}

// One list, the workflow's text (column 4) given: ReadRun reads both the same way.
#define LONGHAUL_RUN_COLUMNS(TEXT)                                                           \
  "r.id, r.workflow_id, r.workflow_name, r.workflow_path, " TEXT                             \
  ", r.status, r.params_json, "                                                              \
  "r.overrides_json, r.parent_run_id, r.from_stage, r.no_cache, r.reason, r.created_at_ms, " \
  "r.started_at_ms, r.ended_at_ms, r.description, r.collected_at_ms, r.submitted_by, r.team, " \
  "r.priority, r.budget_gpu_hours, r.budget_hard, r.budget_raised_by, r.budget_noticed, " \
  "r.budget_hold"
const char kRunColumns[] = LONGHAUL_RUN_COLUMNS("w.text");
const char kShownRunColumns[] = LONGHAUL_RUN_COLUMNS("''");
#undef LONGHAUL_RUN_COLUMNS

const char kRunTotalsColumns[] =
    "r.stage_counts_json, r.gpu_ms_ended, r.gpus_running, r.gpu_start_ms_running";

std::optional<RunTotals> ReadRunTotals(const Stmt& st, int first) {
  if (st.IsNull(first)) return std::nullopt;
  RunTotals t;
  t.stage_counts = JsonToCounts(st.Text(first));
  t.gpu_ms_ended = st.Int(first + 1);
  t.gpus_running = st.Int(first + 2);
  t.gpu_start_ms_running = st.Int(first + 3);
  return t;
}

std::string CountsToJson(const std::map<std::string, int64_t>& counts) {
  json j = json::object();
  for (const auto& [status, n] : counts) j[status] = n;
  return j.dump();
}

std::map<std::string, int64_t> JsonToCounts(const std::string& text) {
  std::map<std::string, int64_t> out;
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_number_integer()) out[it.key()] = it->get<int64_t>();
  }
  return out;
}

RunRow ReadRun(const Stmt& st) {
  RunRow r;
  r.id = st.Int(0);
  r.workflow_id = st.Int(1);
  r.workflow_name = st.Text(2);
  r.workflow_path = st.Text(3);
  r.workflow_text = st.Text(4);
  r.status = ParseRunStatus(st.Text(5)).value_or(v1::RUN_STATUS_UNSPECIFIED);
  r.params = JsonToMap(st.Text(6));
  r.overrides = JsonToMap(st.Text(7));
  r.parent_run_id = st.OptInt(8);
  r.from_stage = st.Text(9);
  r.no_cache = st.Int(10) != 0;
  r.reason = st.Text(11);
  r.created_at_ms = st.Int(12);
  r.started_at_ms = st.OptInt(13);
  r.ended_at_ms = st.OptInt(14);
  r.description = st.Text(15);
  r.collected_at_ms = st.OptInt(16);
  r.user = st.Text(17);
  r.team = st.Text(18);
  r.priority = st.Text(19);
  if (!st.IsNull(20)) r.budget_gpu_hours = st.Double(20);
  r.budget_hard = st.Int(21) != 0;
  r.budget_raised_by = st.Text(22);
  r.budget_noticed = static_cast<int>(st.Int(23));
  r.budget_hold = st.Text(24);
  return r;
}

const char kStageColumns[] =
    "id, run_id, name, position, kind, status, reason, attempt_count, retries_used, cache_key, "
    "fingerprint_json, cached_from_stage_id, outputs_json, progress_json, last_message, "
    "last_message_level, next_retry_at_ms, checkpoint, checkpoint_step, started_at_ms, "
    "ended_at_ms, agent_id, malformed, last_malformed, needs_json, resources_json, plan_action, "
    "plan_reason, description, infra_retries_used";

StageRow ReadStage(const Stmt& st) {
  StageRow s;
  s.id = st.Int(0);
  s.run_id = st.Int(1);
  s.name = st.Text(2);
  s.position = static_cast<int>(st.Int(3));
  s.kind = st.Text(4);
  s.status = ParseStageStatus(st.Text(5)).value_or(v1::STAGE_STATUS_UNSPECIFIED);
  s.reason = st.Text(6);
  s.attempt_count = static_cast<int>(st.Int(7));
  s.retries_used = static_cast<int>(st.Int(8));
  s.cache_key = st.Text(9);
  s.fingerprint_json = st.Text(10);
  s.cached_from_stage_id = st.OptInt(11);
  s.outputs = JsonToMap(st.Text(12));
  s.progress = st.IsNull(13) ? std::nullopt : JsonToProgress(st.Text(13));
  s.last_message = st.Text(14);
  s.last_message_level = st.Text(15);
  s.next_retry_at_ms = st.OptInt(16);
  s.checkpoint = st.Text(17);
  s.checkpoint_step = st.OptInt(18);
  s.started_at_ms = st.OptInt(19);
  s.ended_at_ms = st.OptInt(20);
  s.agent_id = st.Text(21);
  s.malformed = st.Int(22);
  s.last_malformed = st.Text(23);
  s.needs = JsonToStrings(st.Text(24));
  s.resources = JsonToResources(st.Text(25));
  s.plan_action = st.Text(26);
  s.plan_reason = st.Text(27);
  s.description = st.Text(28);
  s.infra_retries_used = static_cast<int>(st.Int(29));
  return s;
}

const char kAttemptColumns[] =
    "id, stage_id, run_id, number, agent_id, state, reason, exit_code, signal, pid, output_dir, "
    "start_blob, created_at_ms, started_at_ms, ended_at_ms, events, malformed, last_malformed, "
    "ready_at_ms, stop_kind, stop_reason, stop_at_ms, stop_for_stage_id, "
    "borrowed";

AttemptRow ReadAttempt(const Stmt& st) {
  AttemptRow a;
  a.id = st.Int(0);
  a.stage_id = st.Int(1);
  a.run_id = st.Int(2);
  a.number = static_cast<int>(st.Int(3));
  a.agent_id = st.Text(4);
  a.state = ParseAttemptState(st.Text(5)).value_or(v1::ATTEMPT_STATE_UNSPECIFIED);
  a.reason = st.Text(6);
  a.exit_code = st.OptInt(7);
  a.signal = st.OptInt(8);
  a.pid = st.OptInt(9);
  a.output_dir = st.Text(10);
  a.start_blob = st.Blob(11);
  a.created_at_ms = st.Int(12);
  a.started_at_ms = st.OptInt(13);
  a.ended_at_ms = st.OptInt(14);
  a.events = st.Int(15);
  a.malformed = st.Int(16);
  a.last_malformed = st.Text(17);
  a.ready_at_ms = st.OptInt(18);
  a.stop_kind = st.Text(19);
  a.stop_reason = st.Text(20);
  a.stop_at_ms = st.OptInt(21);
  a.stop_for_stage_id = st.OptInt(22);
  a.borrowed = st.Int(23) != 0;
  return a;
}

const char kAgentColumns[] =
    "id, hostname, resources_blob, labels_json, version, executor, data_dir, state, "
    "first_seen_ms, last_seen_ms, connected_at_ms, shared_paths_json";

AgentRow ReadAgent(const Stmt& st) {
  AgentRow a;
  a.id = st.Text(0);
  a.hostname = st.Text(1);
  a.resources = JsonToResources(st.Text(2));
  a.labels = JsonToMap(st.Text(3));
  a.version = st.Text(4);
  a.executor = st.Text(5);
  a.data_dir = st.Text(6);
  a.state = v1::AGENT_DISCONNECTED;
  for (auto s : {v1::AGENT_CONNECTED, v1::AGENT_UNREACHABLE, v1::AGENT_DISCONNECTED,
                 v1::AGENT_LOST}) {
    if (AgentStateName(s) == st.Text(7)) a.state = s;
  }
  a.first_seen_ms = st.Int(8);
  a.last_seen_ms = st.Int(9);
  a.connected_at_ms = st.Int(10);
  a.shared_paths = JsonToStrings(st.Text(11));
  return a;
}

Result<std::vector<ArtifactRow>> ReadArtifactsOfStage(Db* db, int64_t stage_id) {
  return QueryAll(
      db,
      "SELECT stage_id, attempt_id, attempt, name, path, bytes, agent_id, ts_ms FROM artifacts "
      "WHERE stage_id = ? ORDER BY id",
      [](const Stmt& st) {
        ArtifactRow a;
        a.stage_id = st.Int(0);
        a.attempt_id = st.Int(1);
        a.attempt = static_cast<int>(st.Int(2));
        a.name = st.Text(3);
        a.path = st.Text(4);
        a.bytes = st.OptInt(5);
        a.agent_id = st.Text(6);
        a.ts_ms = st.Int(7);
        return a;
      },
      stage_id);
}

}  // namespace longhaul::store::internal

namespace longhaul::store {

double RunTotals::GpuHoursAt(int64_t now_ms) const {
  // A running attempt that reports a start after now (another host's clock) counts as 0.
  int64_t running = std::max<int64_t>(0, gpus_running * now_ms - gpu_start_ms_running);
  return static_cast<double>(gpu_ms_ended + running) / 3'600'000.0;
}

}  // namespace longhaul::store
