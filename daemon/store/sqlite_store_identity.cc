// The store's identity (cluster id, incarnation), the check that the database file is still
// the one opened, and the floor under new attempt ids. docs/coordinator.md, "Identity".
#include <sys/stat.h>

#include <cerrno>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/store/query.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {

Status SqliteStore::LoadIdentity(bool created) {
  identity_.created = created;
  struct IdentityRow {
    std::string cluster_id, incarnation;
    int64_t created_at_ms;
    std::optional<int64_t> copied_at_ms;
  };
  ASSIGN_OR_RETURN(std::optional<IdentityRow> row,
                   QueryFirst(writer_.get(),
                              "SELECT cluster_id, incarnation, created_at_ms, copied_at_ms "
                              "FROM identity WHERE one = 1",
                              [](const Stmt& st) {
                                return IdentityRow{st.Text(0), st.Text(1), st.Int(2), st.OptInt(3)};
                              }));
  if (!row) {
    return absl::DataLossError(StrCat(path_, " has no identity row (table identity is empty)"));
  }
  identity_.cluster_id = row->cluster_id;
  identity_.incarnation = row->incarnation;
  identity_.created_at_ms = row->created_at_ms;
  if (!row->copied_at_ms) return OkStatus();
  int64_t copied_at_ms = *row->copied_at_ms;
  // A backup copy put in place: from here on it is another history than the one the copy was
  // taken from, which may have gone on after the copy.
  RETURN_IF_ERROR(writer_->Exec(
      "UPDATE identity SET incarnation = lower(hex(randomblob(8))), copied_at_ms = NULL"));
  ASSIGN_OR_RETURN(std::optional<std::string> incarnation,
                   QueryFirst(writer_.get(), "SELECT incarnation FROM identity", FirstColumnText));
  if (incarnation) {
    identity_.restored_from = identity_.incarnation;
    identity_.copied_at_ms = copied_at_ms;
    identity_.incarnation = *incarnation;
  }
  return OkStatus();
}

Status SqliteStore::CheckFile() {
  struct stat now {};
  std::string why;
  if (::stat(path_.c_str(), &now) != 0) {
    if (errno != ENOENT) return OkStatus();  // cannot tell (EACCES, ...): SQLite will say
    why = "was removed";
  } else if (now.st_dev != dev_ || now.st_ino != ino_) {
    why = "was replaced by another file";
  } else {
    return OkStatus();
  }
  std::lock_guard<std::mutex> lock(file_mu_);
  if (!file_lost_.ok()) return file_lost_;
  file_lost_ = absl::DataLossError(
      StrCat("the database file ", path_, " ", why, " while longhauld had it open (cluster ",
             identity_.cluster_id,
             "); nothing more is written to it and no work is accepted: stop "
             "longhauld, put the database back (or restore a backup) and start it again"));
  GetLogger("store")->error("{}", ToStd(file_lost_.message()));
  return file_lost_;
}

Status SqliteStore::FileCheck() const {
  std::lock_guard<std::mutex> lock(file_mu_);
  return file_lost_;
}

void SqliteStore::RaiseAttemptIds(int64_t highest) {
  if (highest >= attempt_id_floor_) attempt_id_floor_ = highest + 1;
}

}  // namespace longhaul::store
