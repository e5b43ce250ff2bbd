#include "daemon/store/backup.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <mutex>

#include "core/fs.h"
#include "core/strings.h"
#include "daemon/store/sqlite.h"

namespace longhaul::store {
namespace {

int64_t MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Status FsyncPath(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", path, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus("fsync", path, err);
  return OkStatus();
}

// The first column of the first row of `sql` on `db`, as text.
Result<std::string> QueryText(sqlite3* db, const std::string& sql, const std::string& where) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    return absl::InternalError(StrCat(sql, " on ", where, ": ", sqlite3_errmsg(db)));
  }
  std::string out;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(st, 0);
    out = text ? reinterpret_cast<const char*>(text) : "";
  } else if (rc != SQLITE_DONE) {
    std::string msg = sqlite3_errmsg(db);
    sqlite3_finalize(st);
    return absl::DataLossError(StrCat(sql, " on ", where, ": ", msg));
  }
  sqlite3_finalize(st);
  return out;
}

// The copy itself: DEST.tmp from `db_path`, switched to a rollback journal and checked.
Status CopyAndCheck(const std::string& db_path, const std::string& tmp, BackupResult* out) {
  ASSIGN_OR_RETURN(std::unique_ptr<Db> src, Db::Open(db_path, /*create=*/false,
                                                     /*read_only=*/true));
  sqlite3* dest = nullptr;
  int rc = sqlite3_open_v2(tmp.c_str(), &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> dest_owner(dest, sqlite3_close_v2);
  if (rc != SQLITE_OK) {
    return absl::UnavailableError(
        StrCat("create backup file ", tmp, ": ", dest ? sqlite3_errmsg(dest) : sqlite3_errstr(rc)));
  }
  auto start = std::chrono::steady_clock::now();
  sqlite3_backup* b = sqlite3_backup_init(dest, "main", src->raw(), "main");
  if (b == nullptr) {
    return absl::InternalError(StrCat("start backup of ", db_path, ": ", sqlite3_errmsg(dest)));
  }
  sqlite3_busy_timeout(dest, 5000);
  // One step: one read transaction on the source, so the copy is one consistent snapshot.
  rc = sqlite3_backup_step(b, -1);
  out->pages = sqlite3_backup_pagecount(b);
  int finish = sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE || finish != SQLITE_OK) {
    return absl::UnavailableError(StrCat("back up ", db_path, " to ", tmp, ": ",
                                         sqlite3_errstr(rc != SQLITE_DONE ? rc : finish)));
  }
  out->copy_ms = MsSince(start);
  // The copy carries the source's WAL flag; a backup is one file, so it gets a rollback
  // journal (longhauld switches it back to WAL when it opens it).
  ASSIGN_OR_RETURN(std::string mode, QueryText(dest, "PRAGMA journal_mode=DELETE", tmp));
  if (mode != "delete") {
    return absl::InternalError(StrCat("set journal_mode=DELETE on ", tmp, ": got ", mode));
  }
  // Mark the copy as one (docs/coordinator.md, "Identity"): the longhauld that first opens it
  // in place gives it a new incarnation. A store older than the identity table gets one, and
  // a new cluster id, when it is migrated.
  ASSIGN_OR_RETURN(std::string has_identity,
                   QueryText(dest,
                             "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                             "name = 'identity'",
                             tmp));
  if (has_identity == "1") {
    int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    std::string mark = StrCat("UPDATE identity SET copied_at_ms = ", now_ms);
    char* err = nullptr;
    if (sqlite3_exec(dest, mark.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      return absl::InternalError(StrCat("mark ", tmp, " as a backup copy: ", msg));
    }
  }
  auto check_start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::string check, QueryText(dest, "PRAGMA integrity_check", tmp));
  out->check_ms = MsSince(check_start);
  if (check != "ok") {
    return absl::DataLossError(
        StrCat("the copy of ", db_path, " fails integrity_check (", tmp, "): ", check));
  }
  ASSIGN_OR_RETURN(std::string page_size, QueryText(dest, "PRAGMA page_size", tmp));
  ASSIGN_OR_RETURN(std::string version, QueryText(dest, "PRAGMA user_version", tmp));
  out->page_size = std::stoll(page_size);
  out->schema_version = std::stoi(version);
  return OkStatus();
}

}  // namespace

Result<BackupResult> BackupDatabase(const std::string& db_path, const std::string& dest) {
  if (dest.empty() || dest[0] != '/') {
    return absl::InvalidArgumentError(
        StrCat("backup: '", dest, "' is not an absolute path (a file on the coordinator's host)"));
  }
  struct stat src_st {
  }, dest_st{};
  if (::stat(db_path.c_str(), &src_st) != 0) return ErrnoStatus("backup: stat", db_path, errno);
  if (::stat(dest.c_str(), &dest_st) == 0) {
    if (dest_st.st_dev == src_st.st_dev && dest_st.st_ino == src_st.st_ino) {
      return absl::InvalidArgumentError(
          StrCat("backup: ", dest, " is the database itself; name a new file"));
    }
    return absl::AlreadyExistsError(
        StrCat("backup: ", dest, " exists; a backup never overwrites a file, name a new one"));
  }
  std::string dir = DirOf(dest);
  struct stat dir_st {};
  if (::stat(dir.c_str(), &dir_st) != 0 || !S_ISDIR(dir_st.st_mode)) {
    return absl::NotFoundError(StrCat("backup: the directory ", dir, " of ", dest,
                                      " does not exist on the coordinator's host"));
  }

  static std::mutex one_at_a_time;
  std::lock_guard<std::mutex> lock(one_at_a_time);
  auto start = std::chrono::steady_clock::now();
  BackupResult result;
  result.path = dest;
  std::string tmp = dest + ".tmp";
  ::unlink(tmp.c_str());  // left by an interrupted backup
  Status copied = CopyAndCheck(db_path, tmp, &result);
  if (copied.ok()) copied = FsyncPath(tmp, O_RDONLY);
  if (copied.ok() && ::rename(tmp.c_str(), dest.c_str()) != 0) {
    copied = ErrnoStatus("backup: rename to", dest, errno);
  }
  if (!copied.ok()) {
    ::unlink(tmp.c_str());
    ::unlink((tmp + "-journal").c_str());
    return copied;
  }
  RETURN_IF_ERROR(FsyncPath(dir, O_RDONLY | O_DIRECTORY));
  struct stat out_st {};
  if (::stat(dest.c_str(), &out_st) != 0) return ErrnoStatus("backup: stat", dest, errno);
  result.bytes = out_st.st_size;
  result.total_ms = MsSince(start);
  return result;
}

}  // namespace longhaul::store
