// Client reads of a run a page of stages at a time: GetRun with a stage limit, ListStages.
// Keyset paging on (run_id, position) through the stages_by_run_position index, so a page
// costs its own size whatever the run's.
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/strings.h"
#include "daemon/store/proto_convert.h"
#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/row_codec.h"
#include "daemon/store/sqlite_store.h"
#include "proto/stage_merge.h"
#include "proto/state_names.h"

namespace longhaul::store {

using namespace internal;  // NOLINT

namespace {

// Wall time of one stage's own attempts (a running one up to `now_ms`), in ms.
Result<int64_t> StageWallMs(Db* db, int64_t stage_id, int64_t now_ms) {
  ASSIGN_OR_RETURN(
      std::optional<int64_t> ms,
      QueryFirst(
          db,
          "SELECT coalesce(sum(max(coalesce(ended_at_ms, ?2), started_at_ms) - started_at_ms), 0) "
          "FROM attempts WHERE stage_id = ?1 AND started_at_ms IS NOT NULL",
          FirstColumnInt, stage_id, now_ms));
  return ms.value_or(0);
}

// JSON array of strings, for `IN (SELECT value FROM json_each(?))`.
std::string JsonArray(const std::vector<std::string>& items) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& i : items) a.push_back(i);
  return a.dump();
}

// One page of `req.run_id()`'s stages into `out`; sets `next_token` when more follow.
Status ReadStagePage(Db* db, const v1::ListStagesRequest& req, int limit,
                     google::protobuf::RepeatedPtrField<v1::Stage>* out, std::string* next_token) {
  ASSIGN_OR_RETURN(int64_t from, ParseCursor(req.page_token(), "stage page token"));
  std::vector<std::string> statuses;
  for (int s : req.statuses()) {
    statuses.emplace_back(StageStatusName(static_cast<v1::StageStatus>(s)));
  }
  std::vector<std::string> names(req.names().begin(), req.names().end());
  std::string sql = StrCat("SELECT ", kStageColumns, " FROM stages WHERE run_id = ?1");
  if (!req.recent_first()) sql += " AND position >= ?2";
  if (!statuses.empty()) sql += " AND status IN (SELECT value FROM json_each(?3))";
  if (!names.empty()) sql += " AND name IN (SELECT value FROM json_each(?4))";
  sql += req.recent_first() ? " ORDER BY coalesce(ended_at_ms, started_at_ms) IS NULL, "
                              "coalesce(ended_at_ms, started_at_ms) DESC, position LIMIT ?5"
                            : " ORDER BY position LIMIT ?5";
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare(sql));
  st->Bind(1, req.run_id());
  if (!req.recent_first()) st->Bind(2, from);
  if (!statuses.empty()) st->Bind(3, JsonArray(statuses));
  if (!names.empty()) st->Bind(4, JsonArray(names));
  st->Bind(5, limit + 1);
  ASSIGN_OR_RETURN(std::vector<StageRow> rows, AllRows(st, ReadStage));
  if (static_cast<int>(rows.size()) > limit) {
    if (!req.recent_first()) *next_token = std::to_string(rows[limit].position);
    rows.resize(limit);
  }
  int64_t now = SystemClock::Get()->NowMs();
  for (const StageRow& row : rows) {
    v1::Stage* s = out->Add();
    StageRowToProto(row, s);
    RETURN_IF_ERROR(FillStageDetails(db, row.id, row, req.include_attempts(), s));
    ASSIGN_OR_RETURN(int64_t wall_ms, StageWallMs(db, row.id, now));
    s->set_wall_seconds(static_cast<double>(wall_ms) / 1000.0);
    s->set_gpu_hours(static_cast<double>(wall_ms) * row.resources.gpus() / 3'600'000.0);
  }
  return OkStatus();
}

int PageSize(int requested) {
  return requested > 0 ? std::min(requested, kMaxStagesPerMessage) : kMaxStagesPerMessage;
}

}  // namespace

Result<v1::Run> SqliteStore::GetRun(const v1::GetRunRequest& req) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  // One read transaction: the run, its counts and its first page agree.
  ReadSnapshot tx(db.get());
  RETURN_IF_ERROR(tx.Begin());
  v1::Run run;
  std::optional<RunTotals> totals;
  RETURN_IF_ERROR(ReadRunFields(db.get(), req.id(), &run, &totals));
  int64_t now = SystemClock::Get()->NowMs();
  RETURN_IF_ERROR(FillRunTotals(db.get(), req.id(), totals, now, &run));
  RETURN_IF_ERROR(FillRunGpuUsage(db.get(), req.id(), &run));
  SetRunWallSeconds(now, &run);
  SetRunBudgetUse(&run);
  if (req.include_workflow_text()) {
    ASSIGN_OR_RETURN(std::string text, ReadWorkflowTextOfRun(db.get(), req.id()));
    run.set_workflow_text(std::move(text));
  }
  if (req.stage_limit() < 0) {
    if (!run.stage_counts().empty()) run.set_next_stage_page_token("0");
    return run;
  }
  v1::ListStagesRequest page;
  page.set_run_id(req.id());
  page.set_include_attempts(req.include_attempts());
  std::string next;
  RETURN_IF_ERROR(
      ReadStagePage(db.get(), page, PageSize(req.stage_limit()), run.mutable_stages(), &next));
  RETURN_IF_ERROR(MarkCollectedResults(db.get(), req.id(), run.mutable_stages()));
  run.set_next_stage_page_token(next);
  return run;
}

Result<v1::ListStagesResponse> SqliteStore::ListStages(const v1::ListStagesRequest& req) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  ReadSnapshot tx(db.get());
  RETURN_IF_ERROR(tx.Begin());
  RETURN_IF_ERROR(QueryOne(db.get(), "SELECT 1 FROM runs WHERE id = ?",
                           StrCat("no run ", req.run_id()), FirstColumnInt, req.run_id())
                      .status());
  v1::ListStagesResponse resp;
  std::string next;
  RETURN_IF_ERROR(
      ReadStagePage(db.get(), req, PageSize(req.page_size()), resp.mutable_stages(), &next));
  RETURN_IF_ERROR(MarkCollectedResults(db.get(), req.run_id(), resp.mutable_stages()));
  resp.set_next_page_token(next);
  return resp;
}

}  // namespace longhaul::store
