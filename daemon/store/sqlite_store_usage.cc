// GPU use by team and user, for quotas and fair share (docs/scheduling.md): read once when the
// scheduler loads its state, so that what was used before a restart still counts.
#include "daemon/store/query.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {

Result<std::vector<GpuUsageRow>> SqliteStore::LoadGpuUsage(int64_t since_ms) {
  return QueryAll(
      writer_.get(),
      "SELECT r.submitted_by, r.team, coalesce(json_extract(s.resources_json, '$.gpus'), 0), "
      "a.created_at_ms, a.ended_at_ms FROM attempts a JOIN stages s ON s.id = a.stage_id "
      "JOIN runs r ON r.id = a.run_id WHERE a.ended_at_ms IS NOT NULL AND a.ended_at_ms >= ?1 "
      "AND coalesce(json_extract(s.resources_json, '$.gpus'), 0) > 0",
      [](const Stmt& st) {
        GpuUsageRow u;
        u.user = st.Text(0);
        u.team = st.Text(1);
        u.gpus = static_cast<int32_t>(st.Int(2));
        u.start_ms = st.Int(3);
        u.end_ms = st.Int(4);
        return u;
      },
      since_ms);
}

}  // namespace longhaul::store
