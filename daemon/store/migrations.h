// Numbered schema migrations. The database's PRAGMA user_version is the number of the last
// migration applied; Migrate() applies the rest, each in its own transaction.
#pragma once

#include "core/status.h"
#include "daemon/store/sqlite.h"

namespace longhaul::store {

// The schema version this build writes.
int LatestSchemaVersion();

// Brings `db` to LatestSchemaVersion(). FailedPrecondition if the file is newer than this
// build (written by a later longhauld).
Status Migrate(Db* db);

}  // namespace longhaul::store
