// Quotas set at run time (docs/scheduling.md, "Changing quotas at run time"): one row per
// account, the whole rule, "" for one removed.
#include "core/strings.h"
#include "daemon/store/query.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {
namespace {

QuotaRow ReadQuotaRow(const Stmt& st) {
  QuotaRow r;
  r.account = st.Text(0);
  r.rule = st.Text(1);
  r.set_by = st.Text(2);
  r.set_at_ms = st.Int(3);
  return r;
}

}  // namespace

Status SqliteStore::PutQuota(const QuotaRow& row) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare("INSERT OR REPLACE INTO quotas(account, rule, "
                                               "set_by, set_at_ms) VALUES (?,?,?,?)"));
  st->Bind(1, row.account).Bind(2, row.rule).Bind(3, row.set_by).Bind(4, row.set_at_ms);
  return st->Run();
}

Result<std::vector<QuotaRow>> SqliteStore::LoadQuotas() {
  return QueryAll(writer_.get(),
                  "SELECT account, rule, set_by, set_at_ms FROM quotas ORDER BY account",
                  ReadQuotaRow);
}

}  // namespace longhaul::store
