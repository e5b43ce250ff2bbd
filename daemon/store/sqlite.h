// A thin RAII layer over the SQLite C API. Every error becomes a Status that names the SQL and
// SQLite's message. Not thread-safe: one Db per thread (the store keeps one writer and a pool
// of readers).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul::store {

class Stmt;

class Db {
 public:
  // Opens (creating if `create`) the file at `path`; sets WAL, busy timeout, foreign keys.
  static Result<std::unique_ptr<Db>> Open(const std::string& path, bool create, bool read_only);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs one or more statements with no results.
  Status Exec(std::string_view sql);
  // Prepares `sql`; the statement is cached by its text and reset on reuse.
  Result<Stmt*> Prepare(const std::string& sql);
  int64_t LastInsertId() const;
  int Changes() const;
  sqlite3* raw() { return db_; }
  const std::string& path() const { return path_; }

  Status Error(std::string_view what) const;

 private:
  Db(sqlite3* db, std::string path);
  sqlite3* db_;
  std::string path_;
  struct Cache;
  std::unique_ptr<Cache> cache_;
};

// A prepared statement. Bind* take 1-based indexes. Step() returns true while a row is ready.
class Stmt {
 public:
  Stmt(Db* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Stmt& Bind(int i, double v);
  Stmt& Bind(int i, std::string_view v);
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& BindBlob(int i, std::string_view v);
  Stmt& BindNull(int i);
  // Binds NULL for nullopt.
  Stmt& Bind(int i, const std::optional<int64_t>& v);

  Result<bool> Step();
  // Steps to completion (for writes).
  Status Run();
  void Reset();

  int64_t Int(int col) const;
  double Double(int col) const;
  std::string Text(int col) const;
  std::string Blob(int col) const;
  bool IsNull(int col) const;
  std::optional<int64_t> OptInt(int col) const;

 private:
  Db* db_;
  sqlite3_stmt* stmt_;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back if destroyed uncommitted.
class Transaction {
 public:
  explicit Transaction(Db* db) : db_(db) {}
  ~Transaction();
  Status Begin();
  Status Commit();

 private:
  Db* db_;
  bool open_ = false;
};

}  // namespace longhaul::store
