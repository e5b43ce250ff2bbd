// Maintenance windows: agents drained from a time on (docs/scheduling.md, "Maintenance").
#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {

Status SqliteStore::PutAgentDrain(const AgentDrainRow& d) {
  ASSIGN_OR_RETURN(
      Stmt * st,
      writer_->Prepare("INSERT INTO agent_drains(agent_id, at_ms, reason, by_whom, set_at_ms) "
                       "VALUES (?,?,?,?,?) ON CONFLICT(agent_id) DO UPDATE SET "
                       "at_ms = excluded.at_ms, reason = excluded.reason, "
                       "by_whom = excluded.by_whom, set_at_ms = excluded.set_at_ms"));
  st->Bind(1, d.agent_id).Bind(2, d.at_ms).Bind(3, d.reason).Bind(4, d.by).Bind(5, d.set_at_ms);
  return st->Run();
}

Status SqliteStore::DeleteAgentDrain(const std::string& agent_id) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare("DELETE FROM agent_drains WHERE agent_id = ?"));
  st->Bind(1, agent_id);
  return st->Run();
}

Result<std::vector<AgentDrainRow>> SqliteStore::LoadAgentDrains() {
  return QueryAll(writer_.get(),
                  "SELECT agent_id, at_ms, reason, by_whom, set_at_ms FROM agent_drains "
                  "ORDER BY agent_id",
                  [](const Stmt& st) {
                    AgentDrainRow d;
                    d.agent_id = st.Text(0);
                    d.at_ms = st.Int(1);
                    d.reason = st.Text(2);
                    d.by = st.Text(3);
                    d.set_at_ms = st.Int(4);
                    return d;
                  });
}

}  // namespace longhaul::store
