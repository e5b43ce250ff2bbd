// Reservations: GPUs of an agent held for one user or team for a time window
// (docs/scheduling.md, "Reservations").
#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {

Result<int64_t> SqliteStore::InsertReservation(const ReservationRow& r) {
  ASSIGN_OR_RETURN(
      Stmt * st,
      writer_->Prepare("INSERT INTO reservations(agent_id, gpus, holder_kind, holder, from_ms, "
                       "until_ms, reason, by_whom, set_at_ms) VALUES (?,?,?,?,?,?,?,?,?)"));
  st->Bind(1, r.agent_id)
      .Bind(2, r.gpus)
      .Bind(3, r.holder_kind)
      .Bind(4, r.holder)
      .Bind(5, r.from_ms)
      .Bind(6, r.until_ms)
      .Bind(7, r.reason)
      .Bind(8, r.by)
      .Bind(9, r.set_at_ms);
  RETURN_IF_ERROR(st->Run());
  return writer_->LastInsertId();
}

Status SqliteStore::CancelReservation(int64_t id, int64_t at_ms, const std::string& by,
                                      const std::string& reason) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare("UPDATE reservations SET cancelled_at_ms = ?, "
                                               "cancelled_by = ?, cancel_reason = ? WHERE id = ?"));
  st->Bind(1, at_ms).Bind(2, by).Bind(3, reason).Bind(4, id);
  return st->Run();
}

Result<std::vector<ReservationRow>> SqliteStore::LoadReservations(bool ended_too, int64_t now_ms) {
  std::string sql =
      "SELECT id, agent_id, gpus, holder_kind, holder, from_ms, until_ms, reason, by_whom, "
      "set_at_ms, cancelled_at_ms, cancelled_by, cancel_reason FROM reservations";
  if (!ended_too) sql += " WHERE cancelled_at_ms IS NULL AND until_ms > ?";
  sql += " ORDER BY from_ms, id";
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(sql));
  if (!ended_too) st->Bind(1, now_ms);
  return AllRows(st, [](const Stmt& q) {
    ReservationRow r;
    r.id = q.Int(0);
    r.agent_id = q.Text(1);
    r.gpus = static_cast<int>(q.Int(2));
    r.holder_kind = q.Text(3);
    r.holder = q.Text(4);
    r.from_ms = q.Int(5);
    r.until_ms = q.Int(6);
    r.reason = q.Text(7);
    r.by = q.Text(8);
    r.set_at_ms = q.Int(9);
    r.cancelled_at_ms = q.OptInt(10).value_or(0);
    r.cancelled_by = q.Text(11);
    r.cancel_reason = q.Text(12);
    return r;
  });
}

}  // namespace longhaul::store
