// Notifications and their delivery state (docs/operations.md, "Notifications").
#include <algorithm>

#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {
namespace {

constexpr char kColumns[] =
    "id, kind, run_id, stage, sink, payload, state, tries, last_error, next_try_at, "
    "created_at, delivered_at";

// Decodes a row of kColumns.
NotificationRow ReadNotification(const Stmt& st) {
  NotificationRow r;
  r.id = st.Int(0);
  r.kind = st.Text(1);
  r.run_id = st.OptInt(2);
  r.stage = st.Text(3);
  r.sink = st.Text(4);
  r.payload = st.Text(5);
  r.state = st.Text(6);
  r.tries = static_cast<int>(st.Int(7));
  r.last_error = st.Text(8);
  r.next_try_at_ms = st.OptInt(9);
  r.created_at_ms = st.Int(10);
  r.delivered_at_ms = st.OptInt(11);
  return r;
}

}  // namespace

Status SqliteStore::InsertNotification(NotificationRow* row) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(
                                  "INSERT INTO notifications(kind, run_id, stage, sink, payload, "
                                  "state, tries, last_error, next_try_at, created_at, "
                                  "delivered_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)"));
  st->Bind(1, row->kind)
      .Bind(2, row->run_id)
      .Bind(3, row->stage)
      .Bind(4, row->sink)
      .Bind(5, row->payload)
      .Bind(6, row->state)
      .Bind(7, row->tries)
      .Bind(8, row->last_error)
      .Bind(9, row->next_try_at_ms)
      .Bind(10, row->created_at_ms)
      .Bind(11, row->delivered_at_ms);
  RETURN_IF_ERROR(st->Run());
  row->id = writer_->LastInsertId();
  return OkStatus();
}

Status SqliteStore::UpdateNotification(const NotificationRow& row) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(
                                  "UPDATE notifications SET state=?, tries=?, last_error=?, "
                                  "next_try_at=?, delivered_at=? WHERE id=?"));
  st->Bind(1, row.state)
      .Bind(2, row.tries)
      .Bind(3, row.last_error)
      .Bind(4, row.next_try_at_ms)
      .Bind(5, row.delivered_at_ms)
      .Bind(6, row.id);
  return st->Run();
}

Result<std::vector<NotificationRow>> SqliteStore::LoadPendingNotifications() {
  return QueryAll(
      writer_.get(),
      std::string("SELECT ") + kColumns + " FROM notifications WHERE state='pending' ORDER BY id",
      ReadNotification);
}

Result<std::vector<NotificationRow>> SqliteStore::ListNotifications(int64_t run_id,
                                                                    int64_t before_id,
                                                                    int limit) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  limit = std::clamp(limit, 1, 1000);
  return QueryAll(db.get(),
                  std::string("SELECT ") + kColumns +
                      " FROM notifications WHERE (?1 <= 0 OR run_id = ?1) AND (?2 <= 0 OR id < ?2) "
                      "ORDER BY id DESC LIMIT ?3",
                  ReadNotification, run_id, before_id, limit);
}

}  // namespace longhaul::store
