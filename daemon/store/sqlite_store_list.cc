// Client reads for lists and pages: runs (keyset on id, filters, stage counts from the
// stages_by_run_status index, costs, summary metrics), metric points (keyset on id) and costs.
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/strings.h"
#include "daemon/store/proto_convert.h"
#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/row_codec.h"
#include "daemon/store/sqlite_store.h"
#include "proto/state_names.h"

namespace longhaul::store {

using namespace internal;  // NOLINT

namespace internal {

namespace {

// An attempt's wall milliseconds (a running one: up to ?2), and its stage's GPUs.
constexpr char kAttemptWallMs[] =
    "(max(coalesce(a.ended_at_ms, ?2), a.started_at_ms) - a.started_at_ms)";
constexpr char kStageGpus[] = "coalesce(json_extract(s.resources_json, '$.gpus'), 0)";

}  // namespace

Result<std::map<int64_t, SqliteStore::StageCost>> ReadStageCosts(Db* db, int64_t run_id,
                                                                 int64_t now_ms) {
  std::map<int64_t, SqliteStore::StageCost> out;
  RETURN_IF_ERROR(QueryEach(
      db,
      StrCat("SELECT a.stage_id, sum(", kAttemptWallMs, "), sum(", kAttemptWallMs, " * ",
             kStageGpus,
             ") FROM attempts a JOIN stages s ON s.id = a.stage_id "
             "WHERE a.run_id = ?1 AND a.started_at_ms IS NOT NULL GROUP BY a.stage_id"),
      [&](const Stmt& st) {
        out[st.Int(0)] = {st.Double(1) / 1000.0, st.Double(2) / 3'600'000.0};
      },
      run_id, now_ms));
  return out;
}

Status FillRunTotals(Db* db, int64_t run_id, const std::optional<RunTotals>& totals, int64_t now_ms,
                     v1::Run* run) {
  if (totals) {
    for (const auto& [status, n] : totals->stage_counts) {
      if (n > 0) (*run->mutable_stage_counts())[status] = static_cast<int32_t>(n);
    }
    run->set_gpu_hours(totals->GpuHoursAt(now_ms));
    return OkStatus();
  }
  RETURN_IF_ERROR(QueryEach(
      db, "SELECT status, count(*) FROM stages WHERE run_id = ? GROUP BY status",
      [&](const Stmt& st) {
        (*run->mutable_stage_counts())[st.Text(0)] = static_cast<int32_t>(st.Int(1));
      },
      run_id));
  ASSIGN_OR_RETURN(auto costs, ReadStageCosts(db, run_id, now_ms));
  for (const auto& [id, cost] : costs) run->set_gpu_hours(run->gpu_hours() + cost.gpu_hours);
  return OkStatus();
}

void SetRunWallSeconds(int64_t now_ms, v1::Run* run) {
  if (run->started_at_ms() <= 0) return;
  int64_t end = run->ended_at_ms() > 0 ? run->ended_at_ms() : now_ms;
  run->set_wall_seconds(static_cast<double>(std::max<int64_t>(0, end - run->started_at_ms())) /
                        1000.0);
}

Result<int64_t> ParseCursor(const std::string& token, const char* what) {
  if (token.empty()) return 0;
  int64_t v = 0;
  for (char c : token) {
    if (c < '0' || c > '9' || v > (INT64_MAX - 9) / 10) {
      return absl::InvalidArgumentError(
          StrCat("bad ", what, " '", token, "' (pass back the one a page returned)"));
    }
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace internal

namespace {

// The latest value of `stage.metric` in run `run_id` (a cached stage: of the stage it reuses).
Result<std::optional<double>> LatestMetric(Db* db, int64_t run_id, const std::string& name) {
  size_t dot = name.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) {
    return absl::InvalidArgumentError(
        StrCat("metric '", name, "' must be STAGE.NAME, e.g. bench.accept_rate"));
  }
  return QueryFirst(
      db,
      "SELECT value FROM metrics WHERE stage_id = (SELECT coalesce(cached_from_stage_id, id) "
      "FROM stages WHERE run_id = ?1 AND name = ?2) AND name = ?3 ORDER BY id DESC LIMIT 1",
      [](const Stmt& st) { return st.Double(0); }, run_id, name.substr(0, dot),
      name.substr(dot + 1));
}

}  // namespace

Result<v1::ListRunsResponse> SqliteStore::ListRuns(const v1::ListRunsRequest& req) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  // One snapshot: the counts and costs are of the runs as the page read them.
  ReadSnapshot snapshot(db.get());
  RETURN_IF_ERROR(snapshot.Begin());
  int limit = req.limit() > 0 ? std::min(req.limit(), 1000) : 50;
  ASSIGN_OR_RETURN(int64_t before, ParseCursor(req.page_token(), "page token"));
  if (!req.status().empty() && !ParseRunStatus(req.status())) {
    return absl::InvalidArgumentError(
        StrCat("unknown run status '", req.status(),
               "' (expected pending, running, succeeded, failed or cancelled)"));
  }
  std::string sql =
      StrCat("SELECT ", kShownRunColumns, ", ", kRunTotalsColumns, " FROM runs r WHERE 1=1");
  if (!req.status().empty()) sql += " AND r.status = ?1";
  // The workflow filter finds a part of the name, any case: "eagle3" finds "eagle3-campaign".
  if (!req.workflow().empty()) sql += " AND instr(lower(r.workflow_name), lower(?2)) > 0";
  if (before > 0) sql += " AND r.id < ?3";
  if (req.id() > 0) sql += " AND r.id = ?5";
  if (req.parent_run_id() > 0) sql += " AND r.parent_run_id = ?6";
  // Params: ?7, ?8 = first key path and value, ?9, ?10 the second, ...
  std::vector<std::pair<std::string, std::string>> params(req.params().begin(), req.params().end());
  std::sort(params.begin(), params.end());
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].first.empty() || params[i].first.find('"') != std::string::npos) {
      return absl::InvalidArgumentError(StrCat("bad param name '", params[i].first, "'"));
    }
    sql += StrCat(" AND json_extract(r.params_json, ?", 7 + 2 * i, ") = ?", 8 + 2 * i);
  }
  sql += " ORDER BY r.id DESC LIMIT ?4";
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare(sql));
  if (!req.status().empty()) st->Bind(1, req.status());
  if (!req.workflow().empty()) st->Bind(2, req.workflow());
  if (before > 0) st->Bind(3, before);
  st->Bind(4, limit + 1);
  if (req.id() > 0) st->Bind(5, req.id());
  if (req.parent_run_id() > 0) st->Bind(6, req.parent_run_id());
  for (size_t i = 0; i < params.size(); ++i) {
    st->Bind(static_cast<int>(7 + 2 * i), StrCat("$.\"", params[i].first, "\""));
    st->Bind(static_cast<int>(8 + 2 * i), params[i].second);
  }
  v1::ListRunsResponse resp;
  ASSIGN_OR_RETURN(auto rows, AllRows(st, [](const Stmt& row) {
                     return std::make_pair(ReadRun(row), ReadRunTotals(row, kRunColumnCount));
                   }));
  if (static_cast<int>(rows.size()) > limit) {
    rows.resize(limit);
    resp.set_next_page_token(std::to_string(rows.back().first.id));
  }
  // Each run's counts and cost from its kept totals: a page costs the same whatever the size
  // of the runs on it.
  int64_t now = SystemClock::Get()->NowMs();
  for (const auto& [row, totals] : rows) {
    v1::Run* run = resp.add_runs();
    RunRowToProto(row, run);
    RETURN_IF_ERROR(FillRunTotals(db.get(), row.id, totals, now, run));
    SetRunWallSeconds(now, run);
    for (const std::string& name : req.metrics()) {
      ASSIGN_OR_RETURN(std::optional<double> v, LatestMetric(db.get(), row.id, name));
      if (v) (*run->mutable_summary_metrics())[name] = *v;
    }
  }
  return resp;
}

Result<v1::ListMetricsResponse> SqliteStore::ListMetrics(const v1::ListMetricsRequest& req) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  int limit = req.limit() > 0 ? std::min(req.limit(), 10000) : 1000;
  ASSIGN_OR_RETURN(int64_t after, ParseCursor(req.after(), "metrics cursor"));
  ASSIGN_OR_RETURN(
      int64_t stage_id,
      QueryOne(db.get(),
               "SELECT coalesce(cached_from_stage_id, id) FROM stages WHERE run_id = ?1 AND "
               "name = ?2",
               StrCat("run ", req.run_id(), " has no stage '", req.stage(), "'"), FirstColumnInt,
               req.run_id(), req.stage()));
  v1::ListMetricsResponse resp;
  int64_t last = after;
  auto add = [&](const Stmt& st) {
    last = st.Int(0);
    v1::Metric* m = resp.add_points();
    m->set_name(st.Text(1));
    m->set_value(st.Double(2));
    m->set_step(st.IsNull(3) ? -1 : st.Int(3));
    m->set_attempt(static_cast<int32_t>(st.Int(4)));
    m->set_ts_ms(st.Int(5));
  };
  if (req.name().empty()) {
    RETURN_IF_ERROR(QueryEach(db.get(),
                              "SELECT id, name, value, step, attempt, ts_ms FROM metrics WHERE "
                              "stage_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
                              add, stage_id, after, limit));
  } else {
    // One name: the index metrics_by_stage (stage_id, name, id) holds its points alone.
    RETURN_IF_ERROR(QueryEach(db.get(),
                              "SELECT id, name, value, step, attempt, ts_ms FROM metrics WHERE "
                              "stage_id = ?1 AND name = ?4 AND id > ?2 ORDER BY id LIMIT ?3",
                              add, stage_id, after, limit, req.name()));
  }
  resp.set_next_cursor(std::to_string(last));
  return resp;
}

Result<SqliteStore::StageCost> SqliteStore::GetStageCost(int64_t run_id, const std::string& stage) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  ASSIGN_OR_RETURN(int64_t stage_id,
                   QueryOne(db.get(), "SELECT id FROM stages WHERE run_id = ?1 AND name = ?2",
                            StrCat("run ", run_id, " has no stage '", stage, "'"), FirstColumnInt,
                            run_id, stage));
  ASSIGN_OR_RETURN(auto costs, ReadStageCosts(db.get(), run_id, SystemClock::Get()->NowMs()));
  auto it = costs.find(stage_id);
  return it == costs.end() ? StageCost{} : it->second;
}

}  // namespace longhaul::store
