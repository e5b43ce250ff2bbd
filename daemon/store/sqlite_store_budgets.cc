// GPU-hour budgets of teams and workflow names (docs/scheduling.md, "Budgets for a team or a
// workflow"): their rows, and what the ended attempts of a scope's runs used in a period.
#include "core/strings.h"
#include "daemon/store/query.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {
namespace {

constexpr char kScopeBudgetColumns[] =
    "scope, name, gpu_hours, hard, period_ms, anchor_ms, set_by, set_at_ms, noticed, "
    "noticed_period_ms";

ScopeBudgetRow ReadScopeBudgetRow(const Stmt& st) {
  ScopeBudgetRow r;
  r.scope = st.Text(0);
  r.name = st.Text(1);
  r.gpu_hours = st.Double(2);
  r.hard = st.Int(3) != 0;
  r.period_ms = st.Int(4);
  r.anchor_ms = st.Int(5);
  r.set_by = st.Text(6);
  r.set_at_ms = st.Int(7);
  r.noticed = static_cast<int>(st.Int(8));
  r.noticed_period_ms = st.Int(9);
  return r;
}

}  // namespace

Status SqliteStore::PutScopeBudget(const ScopeBudgetRow& row) {
  ASSIGN_OR_RETURN(Stmt * st,
                   writer_->Prepare(StrCat("INSERT OR REPLACE INTO budgets(", kScopeBudgetColumns,
                                           ") VALUES (?,?,?,?,?,?,?,?,?,?)")));
  st->Bind(1, row.scope)
      .Bind(2, row.name)
      .Bind(3, row.gpu_hours)
      .Bind(4, row.hard ? 1 : 0)
      .Bind(5, row.period_ms)
      .Bind(6, row.anchor_ms)
      .Bind(7, row.set_by)
      .Bind(8, row.set_at_ms)
      .Bind(9, row.noticed)
      .Bind(10, row.noticed_period_ms);
  return st->Run();
}

Result<std::vector<ScopeBudgetRow>> SqliteStore::LoadScopeBudgets() {
  return QueryAll(writer_.get(),
                  StrCat("SELECT ", kScopeBudgetColumns, " FROM budgets ORDER BY scope, name"),
                  ReadScopeBudgetRow);
}

Status SqliteStore::DeleteScopeBudget(const std::string& scope, const std::string& name) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare("DELETE FROM budgets WHERE scope = ? AND name = ?"));
  st->Bind(1, scope).Bind(2, name);
  RETURN_IF_ERROR(st->Run());
  if (writer_->Changes() == 0) {
    return absl::NotFoundError(StrCat("no budget of ", scope, " ", name));
  }
  return OkStatus();
}

Result<int64_t> SqliteStore::ScopeEndedGpuMs(const std::string& scope, const std::string& name,
                                             int64_t since_ms) {
  const char* column = scope == "team" ? "r.team" : "r.workflow_name";
  ASSIGN_OR_RETURN(
      std::optional<int64_t> ms,
      QueryFirst(writer_.get(),
                 StrCat("SELECT coalesce(sum((a.ended_at_ms - max(a.started_at_ms, ?2)) * "
                        "coalesce(json_extract(s.resources_json, '$.gpus'), 0)), 0) "
                        "FROM attempts a JOIN runs r ON r.id = a.run_id "
                        "JOIN stages s ON s.id = a.stage_id WHERE ",
                        column,
                        " = ?1 AND a.started_at_ms IS NOT NULL AND a.ended_at_ms > ?2 "
                        "AND a.ended_at_ms > a.started_at_ms"),
                 FirstColumnInt, name, since_ms));
  return ms.value_or(0);
}

}  // namespace longhaul::store
