// Every schema version a longhauld shipped with, as a dump of a store with a finished run
// (tests/fixtures/schema/vN.sql), opened by this build: migrated to the latest version with
// the run, its stages, attempts, metrics, artifacts and cache entry intact. A store newer than
// this build is refused.
#include <gtest/gtest.h>

#include "core/fs.h"
#include "core/strings.h"
#include "daemon/store/migrations.h"
#include "daemon/store/sqlite.h"
#include "daemon/store/sqlite_store.h"
#include "tests/testing/test_util.h"

namespace longhaul::store {
namespace {

using testing::SourceDir;
using testing::TempDir;

std::string FixturePath(int version) {
  return StrCat(SourceDir(), "/tests/fixtures/schema/v", version, ".sql");
}

// A database file made from the dump of `version`.
Result<std::string> LoadFixture(const TempDir& dir, int version) {
  ASSIGN_OR_RETURN(std::string sql, ReadFile(FixturePath(version)));
  std::string path = dir.Join(StrCat("v", version, ".db"));
  ASSIGN_OR_RETURN(std::unique_ptr<Db> db, Db::Open(path, /*create=*/true, /*read_only=*/false));
  RETURN_IF_ERROR(db->Exec(sql));
  return path;
}

Result<int> UserVersion(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<Db> db, Db::Open(path, false, /*read_only=*/true));
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare("PRAGMA user_version"));
  ASSIGN_OR_RETURN(bool row, st->Step());
  int v = row ? static_cast<int>(st->Int(0)) : -1;
  st->Reset();
  return v;
}

TEST(SchemaFixtures, ThereIsOneForEveryVersionThisBuildKnows) {
  for (int v = 1; v <= LatestSchemaVersion(); ++v) {
    EXPECT_TRUE(PathExists(FixturePath(v)))
        << "schema version " << v << " has no fixture: run `python3 "
        << "tests/fixtures/schema/make_fixture.py " << v << "` (docs/coordinator.md, Schema)";
  }
}

TEST(SchemaFixtures, EachFixtureOpensAndMigratesWithItsRunIntact) {
  TempDir dir;
  for (int v = 1; v <= LatestSchemaVersion(); ++v) {
    if (!PathExists(FixturePath(v))) continue;  // the test above says so
    SCOPED_TRACE(StrCat("fixture v", v));
    Result<std::string> path = LoadFixture(dir, v);
    ASSERT_TRUE(path.ok()) << path.status().message();
    ASSERT_EQ(UserVersion(*path).value_or(-1), v) << "the fixture states its own version";

    Result<std::unique_ptr<SqliteStore>> opened = SqliteStore::Open(*path);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    SqliteStore& store = **opened;
    EXPECT_EQ(store.IntegrityCheck().value_or("?"), "ok");

    Result<v1::Run> run = store.GetRun(1, /*include_attempts=*/true);
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(run->workflow_name(), "fixture");
    EXPECT_EQ(run->status(), v1::RUN_SUCCEEDED);
    ASSERT_EQ(run->stages_size(), 2);
    EXPECT_EQ(run->stages(0).name(), "prep");
    EXPECT_EQ(run->stages(1).name(), "train");
    for (const v1::Stage& s : run->stages()) {
      EXPECT_EQ(s.status(), v1::STAGE_SUCCEEDED) << s.name();
      ASSERT_EQ(s.attempts_size(), 1) << s.name();
      EXPECT_EQ(s.attempts(0).state(), v1::ATTEMPT_EXITED) << s.name();
      EXPECT_EQ(s.attempts(0).exit_code(), 0) << s.name();
    }
    EXPECT_EQ(run->stages(1).attempts(0).pid(), 4343);
    // The run's totals, kept in its row from version 12 and filled in by the migration before.
    v1::ListRunsRequest one;
    one.set_id(1);
    Result<v1::ListRunsResponse> listed_runs = store.ListRuns(one);
    ASSERT_TRUE(listed_runs.ok()) << listed_runs.status().message();
    ASSERT_EQ(listed_runs->runs_size(), 1);
    EXPECT_EQ(listed_runs->runs(0).stage_counts().size(), 1u);
    EXPECT_EQ(listed_runs->runs(0).stage_counts().at("succeeded"), 2);
    EXPECT_EQ(listed_runs->runs(0).gpu_hours(), 0.0);

    v1::ListMetricsRequest metrics;
    metrics.set_run_id(1);
    metrics.set_stage("train");
    Result<v1::ListMetricsResponse> points = store.ListMetrics(metrics);
    ASSERT_TRUE(points.ok()) << points.status().message();
    ASSERT_EQ(points->points_size(), 2);
    EXPECT_EQ(points->points(1).name(), "loss");
    EXPECT_DOUBLE_EQ(points->points(1).value(), 0.25);

    v1::ListEventsRequest events;
    events.set_run_id(1);
    events.set_stage("prep");
    Result<v1::ListEventsResponse> listed = store.ListEvents(events);
    ASSERT_TRUE(listed.ok()) << listed.status().message();
    EXPECT_EQ(listed->events_size(), 2);

    // `prep` is a cache entry: a later run with its key reuses its outputs and artifact.
    Result<std::optional<CacheHit>> hit = store.FindCacheHit("key-prep-1", /*exclude=*/999);
    ASSERT_TRUE(hit.ok()) << hit.status().message();
    ASSERT_TRUE(hit->has_value());
    EXPECT_EQ((*hit)->stage_name, "prep");
    EXPECT_EQ((*hit)->outputs.at("rows"), "100");
    ASSERT_EQ((*hit)->artifacts.size(), 1u);
    EXPECT_EQ((*hit)->artifacts[0].path, "/data/runs/1/prep/table.parquet");
    EXPECT_EQ((*hit)->artifacts[0].bytes.value_or(-1), 4096);
    // The agent, with the shared paths version 10 added (none before).
    Result<std::vector<AgentRow>> agents = store.LoadAgents();
    ASSERT_TRUE(agents.ok()) << agents.status().message();
    ASSERT_EQ(agents->size(), 1u);
    EXPECT_EQ((*agents)[0].data_dir, "/data");
    EXPECT_EQ((*agents)[0].shared_paths,
              v >= 10 ? std::vector<std::string>{"/lustre"} : std::vector<std::string>{});
    // The identity: the one stored from version 13; a store from before gets one of its own
    // (a random cluster id and incarnation) from migration 13.
    const StoreIdentity& id = store.identity();
    EXPECT_FALSE(id.created);
    EXPECT_TRUE(id.restored_from.empty());
    if (v >= 13) {
      EXPECT_EQ(id.cluster_id, "5eed0000000000000000000000c1a5e7");
      EXPECT_EQ(id.incarnation, "00000000000000a1");
      EXPECT_EQ(id.created_at_ms, 1700000000000);
    } else {
      EXPECT_EQ(id.cluster_id.size(), 32u);
      EXPECT_EQ(id.incarnation.size(), 16u);
      EXPECT_GT(id.created_at_ms, 1700000000000);
    }
    opened->reset();

    EXPECT_EQ(UserVersion(*path).value_or(-1), LatestSchemaVersion());
  }
}

TEST(SchemaFixtures, AStoreNewerThanThisBuildIsRefusedAndLeftAsItIs) {
  TempDir dir;
  int newer = LatestSchemaVersion() + 1;
  std::string path = dir.Join("newer.db");
  {
    Result<std::unique_ptr<Db>> db = Db::Open(path, true, false);
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE((*db)->Exec(StrCat("CREATE TABLE future (x); PRAGMA user_version=", newer)).ok());
  }
  Result<std::unique_ptr<SqliteStore>> opened = SqliteStore::Open(path);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(opened.status().message())
                .find(StrCat(path, " has schema version ", newer,
                             " but this longhauld knows only up to ", LatestSchemaVersion())),
            std::string::npos)
      << opened.status().message();
  EXPECT_EQ(UserVersion(path).value_or(-1), newer);
}

}  // namespace
}  // namespace longhaul::store
