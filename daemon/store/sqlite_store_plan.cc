// What planning a submission reads (daemon/scheduler/planner.cc): cache hits by key and the
// reference run's keys. A 100,000-stage plan asks 100,000 questions; FindCacheHits answers
// them on one pooled connection in one read transaction, not one lease and lock each.
#include "core/strings.h"
#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/row_codec.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {

using namespace internal;  // NOLINT

const char internal::kCacheHitQuery[] =
    "SELECT id, run_id, name, outputs_json, fingerprint_json FROM stages "
    "WHERE cache_key = ?1 AND status IN ('succeeded', 'stopped') AND run_id != ?2 "
    "ORDER BY id DESC LIMIT 1";

namespace {

// The most recent stage with `cache_key` that produced its result itself, outside
// `exclude_run_id`, with its outputs and artifacts.
Result<std::optional<CacheHit>> FindHit(Db* db, std::string_view cache_key,
                                        int64_t exclude_run_id) {
  static const std::string kQuery = kCacheHitQuery;
  ASSIGN_OR_RETURN(std::optional<CacheHit> hit, QueryFirst(
                                                    db, kQuery,
                                                    [](const Stmt& st) {
                                                      CacheHit h;
                                                      h.stage_id = st.Int(0);
                                                      h.run_id = st.Int(1);
                                                      h.stage_name = st.Text(2);
                                                      h.outputs = JsonToMap(st.Text(3));
                                                      h.fingerprint_json = st.Text(4);
                                                      return h;
                                                    },
                                                    cache_key, exclude_run_id));
  if (hit) {
    ASSIGN_OR_RETURN(hit->artifacts, ReadArtifactsOfStage(db, hit->stage_id));
  }
  return hit;
}

}  // namespace

Result<std::optional<CacheHit>> SqliteStore::FindCacheHit(const std::string& cache_key,
                                                          int64_t exclude_run_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return FindHit(db.get(), cache_key, exclude_run_id);
}

Result<std::vector<std::optional<CacheHit>>> SqliteStore::FindCacheHits(
    const std::vector<std::string_view>& cache_keys, int64_t exclude_run_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  ReadSnapshot tx(db.get());
  RETURN_IF_ERROR(tx.Begin());
  std::vector<std::optional<CacheHit>> out(cache_keys.size());
  for (size_t i = 0; i < cache_keys.size(); ++i) {
    if (cache_keys[i].empty()) continue;
    ASSIGN_OR_RETURN(out[i], FindHit(db.get(), cache_keys[i], exclude_run_id));
  }
  return out;
}

Result<std::vector<SqliteStore::StageKey>> SqliteStore::ReadStageKeys(int64_t run_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return QueryAll(
      db.get(), "SELECT id, name, cache_key FROM stages WHERE run_id = ? ORDER BY position",
      [](const Stmt& st) {
        return StageKey{st.Int(0), st.Text(1), st.Text(2)};
      },
      run_id);
}

Result<std::vector<std::optional<std::string>>> SqliteStore::ReadFingerprintJsons(
    const std::vector<int64_t>& stage_ids) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  ReadSnapshot tx(db.get());
  RETURN_IF_ERROR(tx.Begin());
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare("SELECT fingerprint_json FROM stages WHERE id = ?"));
  std::vector<std::optional<std::string>> out(stage_ids.size());
  for (size_t i = 0; i < stage_ids.size(); ++i) {
    ASSIGN_OR_RETURN(out[i], FirstRow(&BindAll(st, stage_ids[i]), FirstColumnText));
  }
  return out;
}

}  // namespace longhaul::store
