// The audit trail: one row per call that changed something (docs/security.md).
#include <algorithm>

#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {

Status SqliteStore::InsertAudit(const v1::AuditEntry& e) {
  ASSIGN_OR_RETURN(
      Stmt * st,
      writer_->Prepare(
          "INSERT INTO audit(ts_ms, principal, role, peer, action, target, detail, result) "
          "VALUES (?,?,?,?,?,?,?,?)"));
  st->Bind(1, e.ts_ms())
      .Bind(2, e.principal())
      .Bind(3, e.role())
      .Bind(4, e.peer())
      .Bind(5, e.action())
      .Bind(6, e.target())
      .Bind(7, e.detail())
      .Bind(8, e.result());
  return st->Run();
}

Result<v1::ListAuditResponse> SqliteStore::ListAudit(const v1::ListAuditRequest& req) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  int limit = req.limit() > 0 ? std::min(req.limit(), 1000) : 50;
  v1::ListAuditResponse resp;
  RETURN_IF_ERROR(QueryEach(
      db.get(),
      "SELECT id, ts_ms, principal, role, peer, action, target, detail, result FROM audit "
      "WHERE ?1 <= 0 OR id < ?1 ORDER BY id DESC LIMIT ?2",
      [&](const Stmt& st) {
        v1::AuditEntry* e = resp.add_entries();
        e->set_id(st.Int(0));
        e->set_ts_ms(st.Int(1));
        e->set_principal(st.Text(2));
        e->set_role(st.Text(3));
        e->set_peer(st.Text(4));
        e->set_action(st.Text(5));
        e->set_target(st.Text(6));
        e->set_detail(st.Text(7));
        e->set_result(st.Text(8));
      },
      req.before_id(), limit));
  return resp;
}

}  // namespace longhaul::store
