// One-statement reads for the store's files: prepare (cached), bind, step, map each row with a
// row-codec function, reset. Internal to daemon/store.
//
// A row function takes the statement positioned on a row and returns what the row decodes to
// (the codecs of row_codec.h: ReadRun, ReadStage, ReadAttempt, ReadAgent, or a lambda). A
// visitor takes the row and returns void or Status (a non-OK Status stops the read and is
// returned). The statement is reset (bindings cleared) however the read ends, so the cached
// statement is ready for its next use and holds no read lock. `args` bind to ?1, ?2, ... in
// order (int, int64_t, double, strings, std::optional<int64_t> for NULL-or-value).
//
//   ASSIGN_OR_RETURN(std::vector<StageRow> stages,
//                    QueryAll(db, StrCat("SELECT ", kStageColumns, " FROM stages WHERE run_id =
//                    ?"),
//                             ReadStage, run_id));
//   ASSIGN_OR_RETURN(RunRow run, QueryOne(db, sql, StrCat("no run ", id), ReadRun, id));
//
// A statement whose SQL and bindings depend on the request (optional filters) is prepared and
// bound by its caller and read with the Stmt forms (EachRow, AllRows, FirstRow, OneRow).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/status.h"
#include "daemon/store/sqlite.h"

namespace longhaul::store {

// What row function `Read` decodes a row to.
template <typename Read>
using RowOf = std::decay_t<std::invoke_result_t<Read&, const Stmt&>>;

// Row functions for one-column reads ("SELECT max(id) ..."): column 0 as a number, as a
// number or nullopt for NULL, as text.
inline int64_t FirstColumnInt(const Stmt& st) { return st.Int(0); }
inline std::optional<int64_t> FirstColumnOptInt(const Stmt& st) { return st.OptInt(0); }
inline std::string FirstColumnText(const Stmt& st) { return st.Text(0); }

// Binds `args` to ?1, ?2, ... in order.
template <typename... Args>
Stmt& BindAll(Stmt* st, const Args&... args) {
  int i = 0;
  (st->Bind(++i, args), ...);
  return *st;
}

// Resets a statement when the scope ends.
class StmtResetter {
 public:
  explicit StmtResetter(Stmt* st) : st_(st) {}
  ~StmtResetter() { st_->Reset(); }
  StmtResetter(const StmtResetter&) = delete;
  StmtResetter& operator=(const StmtResetter&) = delete;

 private:
  Stmt* st_;
};

// --- on a prepared and bound statement ---

// Calls visit(row) for each row of `st`, then resets it.
template <typename Visit>
Status EachRow(Stmt* st, Visit&& visit) {
  StmtResetter reset(st);
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) return OkStatus();
    if constexpr (std::is_void_v<std::invoke_result_t<Visit&, const Stmt&>>) {
      visit(static_cast<const Stmt&>(*st));
    } else {
      RETURN_IF_ERROR(visit(static_cast<const Stmt&>(*st)));
    }
  }
}

// Every row of `st`, decoded by `read`, in the statement's order.
template <typename Read>
Result<std::vector<RowOf<Read>>> AllRows(Stmt* st, Read&& read) {
  std::vector<RowOf<Read>> out;
  RETURN_IF_ERROR(EachRow(st, [&](const Stmt& row) { out.push_back(read(row)); }));
  return out;
}

// The first row of `st` decoded by `read`, or nullopt when there is none.
template <typename Read>
Result<std::optional<RowOf<Read>>> FirstRow(Stmt* st, Read&& read) {
  StmtResetter reset(st);
  ASSIGN_OR_RETURN(bool row, st->Step());
  if (!row) return std::optional<RowOf<Read>>();
  return std::optional<RowOf<Read>>(read(static_cast<const Stmt&>(*st)));
}

// The first row of `st` decoded by `read`; NotFound with the message `not_found` (which names
// what was looked for: "no run 7") when there is none.
template <typename Read>
Result<RowOf<Read>> OneRow(Stmt* st, const std::string& not_found, Read&& read) {
  ASSIGN_OR_RETURN(std::optional<RowOf<Read>> row, FirstRow(st, std::forward<Read>(read)));
  if (!row) return absl::NotFoundError(not_found);
  return std::move(*row);
}

// --- prepare `sql` on `db`, bind `args`, read ---

template <typename Visit, typename... Args>
Status QueryEach(Db* db, const std::string& sql, Visit&& visit, const Args&... args) {
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare(sql));
  BindAll(st, args...);
  return EachRow(st, std::forward<Visit>(visit));
}

template <typename Read, typename... Args>
Result<std::vector<RowOf<Read>>> QueryAll(Db* db, const std::string& sql, Read&& read,
                                          const Args&... args) {
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare(sql));
  BindAll(st, args...);
  return AllRows(st, std::forward<Read>(read));
}

template <typename Read, typename... Args>
Result<std::optional<RowOf<Read>>> QueryFirst(Db* db, const std::string& sql, Read&& read,
                                              const Args&... args) {
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare(sql));
  BindAll(st, args...);
  return FirstRow(st, std::forward<Read>(read));
}

template <typename Read, typename... Args>
Result<RowOf<Read>> QueryOne(Db* db, const std::string& sql, const std::string& not_found,
                             Read&& read, const Args&... args) {
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare(sql));
  BindAll(st, args...);
  return OneRow(st, not_found, std::forward<Read>(read));
}

}  // namespace longhaul::store
