#include "daemon/store/sqlite.h"

#include <unordered_map>

#include "core/strings.h"

namespace longhaul::store {

struct Db::Cache {
  std::unordered_map<std::string, std::unique_ptr<Stmt>> stmts;
};

Db::Db(sqlite3* db, std::string path)
    : db_(db), path_(std::move(path)), cache_(std::make_unique<Cache>()) {}

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, bool create, bool read_only) {
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX;
  flags |= read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (create && !read_only) flags |= SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    return absl::UnavailableError(StrCat("open database ", path, ": ", msg));
  }
  std::unique_ptr<Db> db(new Db(raw, path));
  sqlite3_busy_timeout(raw, 5000);
  sqlite3_extended_result_codes(raw, 1);
  if (!read_only) {
    // WAL: readers never block the single writer. synchronous=NORMAL: a commit survives a
    // crash of the process (kill -9); a power loss may drop the last commits, never corrupt.
    RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode=WAL"));
    RETURN_IF_ERROR(db->Exec("PRAGMA synchronous=NORMAL"));
  }
  RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys=ON"));
  RETURN_IF_ERROR(db->Exec("PRAGMA temp_store=MEMORY"));
  return db;
}

Db::~Db() {
  cache_.reset();  // finalize statements before closing
  sqlite3_close_v2(db_);
}

Status Db::Error(std::string_view what) const {
  int code = sqlite3_extended_errcode(db_);
  std::string msg = StrCat(what, ": ", sqlite3_errmsg(db_), " (", path_, ")");
  switch (code & 0xff) {
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(msg);
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(msg);
    default:
      return absl::InternalError(msg);
  }
}

Status Db::Exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    Status st = Error(StrCat("exec '", s.substr(0, 60), "'"));
    return Status(st.code(), StrCat("exec '", s.substr(0, 60), "': ", msg, " (", path_, ")"));
  }
  return OkStatus();
}

Result<Stmt*> Db::Prepare(const std::string& sql) {
  auto it = cache_->stmts.find(sql);
  if (it != cache_->stmts.end()) {
    it->second->Reset();
    return it->second.get();
  }
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &raw, nullptr) != SQLITE_OK) {
    return Error(StrCat("prepare '", sql.substr(0, 80), "'"));
  }
  auto stmt = std::make_unique<Stmt>(this, raw);
  Stmt* out = stmt.get();
  cache_->stmts.emplace(sql, std::move(stmt));
  return out;
}

int64_t Db::LastInsertId() const { return sqlite3_last_insert_rowid(db_); }
int Db::Changes() const { return sqlite3_changes(db_); }

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

Stmt& Stmt::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}
Stmt& Stmt::Bind(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}
Stmt& Stmt::Bind(int i, std::string_view v) {
  // An empty view may have no data pointer, which SQLite would bind as NULL, not ''.
  sqlite3_bind_text(stmt_, i, v.data() != nullptr ? v.data() : "", static_cast<int>(v.size()),
                    SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::BindBlob(int i, std::string_view v) {
  sqlite3_bind_blob(stmt_, i, v.data() != nullptr ? v.data() : "", static_cast<int>(v.size()),
                    SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::BindNull(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}
Stmt& Stmt::Bind(int i, const std::optional<int64_t>& v) {
  return v ? Bind(i, *v) : BindNull(i);
}

Result<bool> Stmt::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status st = db_->Error(StrCat("step '", std::string(sqlite3_sql(stmt_)).substr(0, 80), "'"));
  sqlite3_reset(stmt_);
  return st;
}

Status Stmt::Run() {
  for (;;) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) break;
  }
  Reset();
  return OkStatus();
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Stmt::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Stmt::Double(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Stmt::Text(int col) const {
  const unsigned char* t = sqlite3_column_text(stmt_, col);
  if (t == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(t),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}
std::string Stmt::Blob(int col) const {
  const void* b = sqlite3_column_blob(stmt_, col);
  if (b == nullptr) return "";
  return std::string(static_cast<const char*>(b),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}
bool Stmt::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
std::optional<int64_t> Stmt::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

Transaction::~Transaction() {
  if (open_) (void)db_->Exec("ROLLBACK");
}

Status Transaction::Begin() {
  RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  open_ = true;
  return OkStatus();
}

Status Transaction::Commit() {
  Status st = db_->Exec("COMMIT");
  if (st.ok()) open_ = false;
  return st;
}

}  // namespace longhaul::store
