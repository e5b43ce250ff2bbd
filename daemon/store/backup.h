// An online copy of the coordinator's SQLite file, for `longhaul admin backup` and
// `longhauld --backup`.
//
// The copy is made with SQLite's online backup API in one step (sqlite3_backup_step(-1)) from
// a connection of its own. The database is in WAL mode, so that step is one read transaction:
// the copy is the database as of one commit, and the scheduler's writer is never blocked by it
// (a WAL reader holds no lock a writer waits for; it only keeps the checkpointer from
// recycling the WAL past its snapshot until it ends). Copying a few hundred pages per step
// would not help the writer and would hurt the copy: any commit by another connection between
// two steps restarts the backup from page 1, so under a steady stream of events it might
// never finish. VACUUM INTO would also copy in one read transaction but rebuilds every table
// and index, which costs more time than copying pages.
//
// The copy is written to DEST.tmp, switched to rollback-journal mode (a single self-contained
// file), checked with PRAGMA integrity_check, fsynced and renamed to DEST (and the directory
// fsynced), so DEST appears only complete and checked.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace longhaul::store {

struct BackupResult {
  std::string path;        // DEST
  int64_t pages = 0;       // pages copied
  int64_t page_size = 0;   // bytes per page
  int64_t bytes = 0;       // size of DEST
  int schema_version = 0;  // PRAGMA user_version of the copy
  int64_t copy_ms = 0;     // the backup step
  int64_t check_ms = 0;    // integrity_check of the copy
  int64_t total_ms = 0;    // everything, fsyncs and rename included
};

// Copies the SQLite database at `db_path` (which must exist; it is only read) to `dest`.
// InvalidArgument for an empty or relative `dest` or one naming `db_path`; AlreadyExists when
// `dest` exists (a backup never overwrites); NotFound when `db_path` or the directory of
// `dest` does not exist; DataLoss when the copy fails integrity_check (DEST is then not
// created). Backups in one process run one at a time. Thread-safe.
Result<BackupResult> BackupDatabase(const std::string& db_path, const std::string& dest);

}  // namespace longhaul::store
