#include "daemon/store/sqlite_store.h"

#include <gtest/gtest.h>

#include <functional>

#include "daemon/store/migrations.h"
#include "daemon/store/reader.h"
#include "daemon/store/row_codec.h"
#include "longhaul/v1/agent.pb.h"
#include "tests/daemon/store/store_fixture.h"
#include "tests/testing/test_util.h"

namespace longhaul::store {
namespace {

class SqliteStoreTest : public ReopenedStoreTest {
 protected:
  // A run with stages a -> b, committed.
  // `prepare` fills in what the submission decides (cache key, resources) before the insert:
  // UpdateStage does not change those.
  RunRow MakeRun(const std::string& workflow = "wf", v1::RunStatus status = v1::RUN_RUNNING,
                 const std::function<void(StageRow&)>& prepare = {}) {
    EXPECT_TRUE(store_->Begin().ok());
    auto wf = store_->PutWorkflow(workflow, "name: " + workflow, "hash-" + workflow, 1000);
    EXPECT_TRUE(wf.ok());
    RunRow run;
    run.workflow_id = *wf;
    run.workflow_name = workflow;
    run.status = status;
    run.params = {{"model", "/m"}};
    run.created_at_ms = 1000;
    EXPECT_TRUE(store_->InsertRun(&run).ok());
    for (int i = 0; i < 2; ++i) {
      StageRow s;
      s.run_id = run.id;
      s.name = i == 0 ? "a" : "b";
      s.position = i;
      if (i == 1) s.needs = {"a"};
      if (prepare) prepare(s);
      EXPECT_TRUE(store_->InsertStage(&s).ok());
      stages_.push_back(s);
    }
    EXPECT_TRUE(store_->Commit().ok());
    return run;
  }

  // Inserts attempt `number` of stages_[stage] on `agent`, inside the caller's transaction;
  // `prepare` sets more of its fields first.
  AttemptRow InsertAttempt(const RunRow& run, size_t stage, int number, const std::string& agent,
                           v1::AttemptState state = v1::ATTEMPT_STATE_UNSPECIFIED,
                           const std::function<void(AttemptRow&)>& prepare = nullptr) {
    AttemptRow at;
    at.stage_id = stages_[stage].id;
    at.run_id = run.id;
    at.number = number;
    at.agent_id = agent;
    at.state = state;
    if (prepare) prepare(at);
    EXPECT_TRUE(store_->InsertAttempt(&at).ok());
    return at;
  }

  std::vector<StageRow> stages_;
};

TEST_F(SqliteStoreTest, MigratesToLatestAndKeepsDataAcrossReopen) {
  RunRow run = MakeRun();
  Reopen();
  auto got = store_->GetRun(run.id, false);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->workflow_name(), "wf");
  ASSERT_EQ(got->stages_size(), 2);
  EXPECT_EQ(got->stages(1).needs(0), "a");
  EXPECT_EQ(got->params().at("model"), "/m");
  EXPECT_EQ(*store_->IntegrityCheck(), "ok");
}

TEST_F(SqliteStoreTest, DescriptionsAndFingerprintReachTheProto) {
  ASSERT_TRUE(store_->Begin().ok());
  auto wf = store_->PutWorkflow("wf", "name: wf", "hash-wf", 1000);
  ASSERT_TRUE(wf.ok());
  RunRow run;
  run.workflow_id = *wf;
  run.workflow_name = "wf";
  run.created_at_ms = 1000;
  run.description = "a diamond of four small stages";
  ASSERT_TRUE(store_->InsertRun(&run).ok());
  StageRow s;
  s.run_id = run.id;
  s.name = "greet";
  s.description = "says hello";
  s.fingerprint_json = R"({"key":"k"})";
  ASSERT_TRUE(store_->InsertStage(&s).ok());
  s.status = v1::STAGE_RUNNING;  // an update keeps both
  ASSERT_TRUE(store_->UpdateStage(s).ok());
  ASSERT_TRUE(store_->Commit().ok());
  Reopen();
  auto got = store_->GetRun(run.id, false);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->description(), "a diamond of four small stages");
  ASSERT_EQ(got->stages_size(), 1);
  EXPECT_EQ(got->stages(0).description(), "says hello");
  EXPECT_EQ(got->stages(0).fingerprint(), R"({"key":"k"})");
  EXPECT_EQ(got->stages(0).status(), v1::STAGE_RUNNING);
}

TEST_F(SqliteStoreTest, MigratesAVersion1DatabaseToDescriptions) {
  RunRow run = MakeRun();
  store_.reset();
  {
    // The schema as version 1 left it: no description columns, no later tables.
    auto db = Db::Open(dir_.Join("longhaul.db"), false, false);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("ALTER TABLE runs DROP COLUMN description").ok());
    ASSERT_TRUE((*db)->Exec("ALTER TABLE stages DROP COLUMN description").ok());
    ASSERT_TRUE((*db)->Exec("ALTER TABLE stages DROP COLUMN infra_retries_used").ok());
    ASSERT_TRUE((*db)->Exec("DROP TABLE audit").ok());
    ASSERT_TRUE((*db)->Exec("DROP TABLE notifications").ok());
    ASSERT_TRUE((*db)->Exec("DROP TABLE identity").ok());
    ASSERT_TRUE((*db)->Exec("DROP TABLE gpus; DROP TABLE gpu_series").ok());
    ASSERT_TRUE((*db)
                    ->Exec("DROP TABLE run_sources; DROP TABLE attempt_environments; "
                           "DROP TABLE agent_engine_versions")
                    .ok());
    ASSERT_TRUE((*db)->Exec("DROP TABLE stage_judged_from").ok());
    ASSERT_TRUE((*db)->Exec("DROP TABLE agent_drains; DROP TABLE tags; DROP TABLE run_tag_uses; "
                            "DROP TABLE budgets").ok());
    ASSERT_TRUE((*db)->Exec("DROP TABLE reservations; DROP TABLE quotas").ok());
    ASSERT_TRUE((*db)->Exec("ALTER TABLE runs DROP COLUMN collected_at_ms").ok());
    ASSERT_TRUE((*db)->Exec("ALTER TABLE agents DROP COLUMN shared_paths_json").ok());
    ASSERT_TRUE((*db)->Exec("ALTER TABLE attempts DROP COLUMN ready_at_ms").ok());
    for (const char* column :
         {"stop_kind", "stop_reason", "stop_at_ms", "stop_for_stage_id", "borrowed"}) {
      ASSERT_TRUE((*db)->Exec(std::string("ALTER TABLE attempts DROP COLUMN ") + column).ok());
    }
    for (const char* column : {"submitted_by", "team", "priority", "budget_gpu_hours",
                               "budget_hard", "budget_raised_by", "budget_noticed",
                               "budget_hold"}) {
      ASSERT_TRUE((*db)->Exec(std::string("ALTER TABLE runs DROP COLUMN ") + column).ok());
    }
    for (const char* column : {"stage_counts_json", "gpu_ms_ended", "gpus_running",
                               "gpu_start_ms_running"}) {
      ASSERT_TRUE((*db)->Exec(std::string("ALTER TABLE runs DROP COLUMN ") + column).ok());
    }
    ASSERT_TRUE((*db)->Exec("DROP INDEX stages_by_cache_hit").ok());
    ASSERT_TRUE((*db)->Exec("CREATE INDEX stages_by_cache_key ON stages(cache_key, status)").ok());
    for (const char* index : {"stages_by_run_status", "metrics_by_stage_id", "runs_by_parent",
                              "runs_by_workflow_status", "stages_by_run_position",
                              "stages_by_cached_from"}) {
      ASSERT_TRUE((*db)->Exec(std::string("DROP INDEX ") + index).ok()) << index;
    }
    ASSERT_TRUE((*db)->Exec("PRAGMA user_version=1").ok());
  }
  Reopen();
  auto got = store_->GetRun(run.id, false);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->description(), "");
  ASSERT_EQ(got->stages_size(), 2);
  EXPECT_EQ(got->stages(0).description(), "");
  auto rows = store_->ReadStages(run.id);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0].infra_retries_used, 0);  // the column migration 7 added
  EXPECT_EQ(LatestSchemaVersion(), 24);
  EXPECT_EQ(got->priority(), "normal");  // migration 18: runs stored before are normal
  EXPECT_EQ(got->user(), "");
  EXPECT_EQ(store_->identity().cluster_id.size(), 32u);  // migration 13 made one
  // Migration 9's table is there and works.
  ASSERT_TRUE(store_->Begin().ok());
  NotificationRow n;
  n.kind = "run_failed";
  n.run_id = run.id;
  n.sink = "{\"webhook\":\"http://h/x\",\"format\":\"json\"}";
  n.payload = "{}";
  n.created_at_ms = 5;
  n.next_try_at_ms = 5;
  ASSERT_TRUE(store_->InsertNotification(&n).ok());
  ASSERT_TRUE(store_->Commit().ok());
  auto pending = store_->LoadPendingNotifications();
  ASSERT_TRUE(pending.ok()) << pending.status();
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].id, n.id);
  EXPECT_EQ((*pending)[0].run_id, run.id);
  // Migration 17's table: which earlier stage's values a sweep item is judged on.
  ASSERT_TRUE(store_->Begin().ok());
  ASSERT_TRUE(store_->PutJudgedFrom(7, 3).ok());
  ASSERT_TRUE(store_->Commit().ok());
  auto judged = store_->LoadJudgedFrom({7, 8});
  ASSERT_TRUE(judged.ok()) << judged.status();
  EXPECT_EQ(*judged, (std::map<int64_t, int64_t>{{7, 3}}));
}

TEST_F(SqliteStoreTest, ScopeBudgetsAreKeptAndTheirScopesEndedUseIsCutAtThePeriod) {
  RunRow run = MakeRun("eagle3", v1::RUN_RUNNING, [](StageRow& s) { s.resources.set_gpus(2); });
  ASSERT_TRUE(store_->Begin().ok());
  // Two GPUs from 0 to 1 h, ended; one attempt still running (not counted here).
  InsertAttempt(run, 0, 1, "n1", v1::ATTEMPT_EXITED, [](AttemptRow& a) {
    a.started_at_ms = 0;
    a.ended_at_ms = 3'600'000;
  });
  InsertAttempt(run, 1, 1, "n1", v1::ATTEMPT_RUNNING, [](AttemptRow& a) { a.started_at_ms = 0; });
  ScopeBudgetRow row;
  row.scope = "workflow";
  row.name = "eagle3";
  row.gpu_hours = 500;
  row.hard = true;
  row.period_ms = 86'400'000;
  row.anchor_ms = 7;
  row.set_by = "ada";
  row.set_at_ms = 9;
  row.noticed = 80;
  row.noticed_period_ms = 7;
  ASSERT_TRUE(store_->PutScopeBudget(row).ok());
  row.gpu_hours = 600;  // written whole again: replaced, not added
  ASSERT_TRUE(store_->PutScopeBudget(row).ok());
  ASSERT_TRUE(store_->Commit().ok());
  Reopen();
  auto loaded = store_->LoadScopeBudgets();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->size(), 1u);
  const ScopeBudgetRow& got = (*loaded)[0];
  EXPECT_EQ(got.scope, "workflow");
  EXPECT_EQ(got.name, "eagle3");
  EXPECT_DOUBLE_EQ(got.gpu_hours, 600);
  EXPECT_TRUE(got.hard);
  EXPECT_EQ(got.period_ms, 86'400'000);
  EXPECT_EQ(got.anchor_ms, 7);
  EXPECT_EQ(got.set_by, "ada");
  EXPECT_EQ(got.noticed, 80);
  EXPECT_EQ(got.noticed_period_ms, 7);
  EXPECT_EQ(*store_->ScopeEndedGpuMs("workflow", "eagle3", 0), 2 * 3'600'000);
  EXPECT_EQ(*store_->ScopeEndedGpuMs("workflow", "eagle3", 1'800'000), 3'600'000)
      << "cut at the period's start";
  EXPECT_EQ(*store_->ScopeEndedGpuMs("workflow", "eagle3", 3'600'000), 0);
  EXPECT_EQ(*store_->ScopeEndedGpuMs("workflow", "other", 0), 0);
  EXPECT_EQ(*store_->ScopeEndedGpuMs("team", "vision", 0), 0) << "the run has no team";
}

TEST_F(SqliteStoreTest, ARemovedScopeBudgetIsGoneAndRemovingItTwiceIsNotFound) {
  ScopeBudgetRow row;
  row.scope = "team";
  row.name = "vision";
  row.gpu_hours = 5;
  row.period_ms = 86'400'000;
  ASSERT_TRUE(store_->PutScopeBudget(row).ok());
  ASSERT_TRUE(store_->DeleteScopeBudget("team", "vision").ok());
  Reopen();
  EXPECT_TRUE(store_->LoadScopeBudgets()->empty());
  Status again = store_->DeleteScopeBudget("team", "vision");
  EXPECT_EQ(again.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(again.message(), "no budget of team vision");
}

TEST_F(SqliteStoreTest, QuotasSetAtRunTimeAreKeptWholeByAccountRemovedOnesAsEmptyRules) {
  ASSERT_TRUE(store_->PutQuota({"team:vision", "gpus:2", "ada", 5}).ok());
  ASSERT_TRUE(store_->PutQuota({"team:vision", "gpus:4,borrow:8", "bob", 6}).ok());
  ASSERT_TRUE(store_->PutQuota({"team:nlp", "", "ada", 7}).ok());
  Reopen();
  auto loaded = store_->LoadQuotas();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ((*loaded)[0].account, "team:nlp");
  EXPECT_EQ((*loaded)[0].rule, "") << "a removal is kept, so that --quota does not come back";
  EXPECT_EQ((*loaded)[1].account, "team:vision");
  EXPECT_EQ((*loaded)[1].rule, "gpus:4,borrow:8");
  EXPECT_EQ((*loaded)[1].set_by, "bob");
  EXPECT_EQ((*loaded)[1].set_at_ms, 6);
}

TEST_F(SqliteStoreTest, NotificationsKeepTheirDeliveryStateAndListNewestFirst) {
  RunRow run = MakeRun();
  ASSERT_TRUE(store_->Begin().ok());
  std::vector<NotificationRow> rows(3);
  for (int i = 0; i < 3; ++i) {
    rows[i].kind = i == 2 ? "agent_lost" : "stage_failed";
    if (i < 2) rows[i].run_id = run.id;
    rows[i].sink = "{\"command\":[\"x\"]}";
    rows[i].payload = "{\"n\":" + std::to_string(i) + "}";
    rows[i].created_at_ms = 100 + i;
    ASSERT_TRUE(store_->InsertNotification(&rows[i]).ok());
  }
  rows[0].state = "delivered";
  rows[0].tries = 3;
  rows[0].last_error = "HTTP 500";
  rows[0].delivered_at_ms = 900;
  ASSERT_TRUE(store_->UpdateNotification(rows[0]).ok());
  ASSERT_TRUE(store_->Commit().ok());
  Reopen();

  auto of_run = store_->ListNotifications(run.id, 0, 50);
  ASSERT_TRUE(of_run.ok()) << of_run.status();
  ASSERT_EQ(of_run->size(), 2u);
  EXPECT_EQ((*of_run)[0].id, rows[1].id);  // newest first
  EXPECT_EQ((*of_run)[1].state, "delivered");
  EXPECT_EQ((*of_run)[1].tries, 3);
  EXPECT_EQ((*of_run)[1].last_error, "HTTP 500");
  EXPECT_EQ((*of_run)[1].delivered_at_ms, 900);
  auto all = store_->ListNotifications(0, 0, 50);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_FALSE((*all)[0].run_id.has_value());
  auto page = store_->ListNotifications(0, rows[2].id, 1);
  ASSERT_EQ(page->size(), 1u);
  EXPECT_EQ((*page)[0].id, rows[1].id);
  ASSERT_TRUE(store_->Begin().ok());
  auto pending = store_->LoadPendingNotifications();
  ASSERT_TRUE(store_->Commit().ok());
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 2u) << "the delivered one is no longer pending";
  EXPECT_EQ((*pending)[0].id, rows[1].id);
}

TEST_F(SqliteStoreTest, RefusesADatabaseFromANewerVersion) {
  store_.reset();
  {
    auto db = Db::Open(dir_.Join("longhaul.db"), false, false);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("PRAGMA user_version=999").ok());
  }
  auto s = SqliteStore::Open(dir_.Join("longhaul.db"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("schema version 999"), std::string::npos);
}

TEST_F(SqliteStoreTest, SameWorkflowTextIsStoredOnce) {
  ASSERT_TRUE(store_->Begin().ok());
  auto a = store_->PutWorkflow("wf", "text", "h1", 1);
  auto b = store_->PutWorkflow("wf", "text", "h1", 2);
  ASSERT_TRUE(store_->Commit().ok());
  EXPECT_EQ(*a, *b);
}

TEST_F(SqliteStoreTest, EventsAreStoredOncePerAttemptAndSeq) {
  RunRow run = MakeRun();
  ASSERT_TRUE(store_->Begin().ok());
  AttemptRow at = InsertAttempt(run, 0, 1, "n1");
  EventRow ev{1, 10, "progress", R"({"progress":{"done":1}})"};
  EXPECT_TRUE(*store_->InsertEvent(at.id, ev));
  EXPECT_FALSE(*store_->InsertEvent(at.id, ev));  // a re-send after reconnect
  ev.seq = 2;
  EXPECT_TRUE(*store_->InsertEvent(at.id, ev));
  ASSERT_TRUE(store_->Commit().ok());
  v1::ListEventsRequest req;
  req.set_run_id(run.id);
  req.set_stage("a");
  auto events = store_->ListEvents(req);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->events_size(), 2);
  EXPECT_EQ(events->events(1).event().seq(), 2);
}

TEST_F(SqliteStoreTest, LoadsAnAttemptById) {
  RunRow run = MakeRun();
  ASSERT_TRUE(store_->Begin().ok());
  AttemptRow at;
  at.stage_id = stages_[1].id;
  at.run_id = run.id;
  at.number = 3;
  at.agent_id = "n2";
  at.state = v1::ATTEMPT_LOST;
  at.reason = "lost: agent n2 silent for 3m00s";  // every field the load must bring back
  ASSERT_TRUE(store_->InsertAttempt(&at).ok());
  auto got = store_->LoadAttemptById(at.id);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->stage_id, stages_[1].id);
  EXPECT_EQ(got->number, 3);
  EXPECT_EQ(got->agent_id, "n2");
  EXPECT_EQ(got->state, v1::ATTEMPT_LOST);
  EXPECT_EQ(got->reason, at.reason);
  auto missing = store_->LoadAttemptById(at.id + 1);
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  ASSERT_TRUE(store_->Commit().ok());
}

TEST_F(SqliteStoreTest, GetRunShowsAttemptsLatestMetricsAndArtifacts) {
  RunRow run = MakeRun();
  ASSERT_TRUE(store_->Begin().ok());
  AttemptRow at = InsertAttempt(run, 0, 1, "n1", v1::ATTEMPT_EXITED);
  ASSERT_TRUE(store_->InsertMetric({stages_[0].id, at.id, 1, "loss", 2.0, 0, 1}).ok());
  ASSERT_TRUE(store_->InsertMetric({stages_[0].id, at.id, 1, "loss", 1.5, 1, 2}).ok());
  ASSERT_TRUE(store_->InsertArtifact({stages_[0].id, at.id, 1, "ckpt", "/d/ckpt", 42, "n1", 3})
                  .ok());
  ASSERT_TRUE(store_->Commit().ok());
  auto got = store_->GetRun(run.id, true);
  ASSERT_TRUE(got.ok());
  const v1::Stage& a = got->stages(0);
  ASSERT_EQ(a.attempts_size(), 1);
  EXPECT_EQ(a.attempts(0).state(), v1::ATTEMPT_EXITED);
  ASSERT_EQ(a.metrics_size(), 1);
  EXPECT_DOUBLE_EQ(a.metrics(0).value(), 1.5);
  ASSERT_EQ(a.artifacts_size(), 1);
  EXPECT_EQ(a.artifacts(0).bytes(), 42);
}

// The web UI's timeline draws ready -> started as queued time: the ready time an attempt was
// made with, and the GPUs it was started on, come back with it (0 and none when not recorded).
TEST_F(SqliteStoreTest, AnAttemptKeepsItsReadyTimeAndItsGpus) {
  RunRow run = MakeRun();
  ASSERT_TRUE(store_->Begin().ok());
  InsertAttempt(run, 0, 1, "n1", v1::ATTEMPT_EXITED);
  AttemptRow retry = InsertAttempt(run, 0, 2, "n1", v1::ATTEMPT_RUNNING, [](AttemptRow& a) {
    a.ready_at_ms = 1'700'000'001'000;
    a.created_at_ms = 1'700'000'001'500;
    v1::StartAttempt start;
    start.add_gpus(2);
    start.add_gpus(3);
    a.start_blob = start.SerializeAsString();
  });
  retry.started_at_ms = 1'700'000'002'000;
  ASSERT_TRUE(store_->UpdateAttempt(retry).ok());
  ASSERT_TRUE(store_->Commit().ok());
  auto got = store_->GetRun(run.id, true);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->stages(0).attempts_size(), 2);
  const v1::Attempt& a1 = got->stages(0).attempts(0);
  const v1::Attempt& a2 = got->stages(0).attempts(1);
  EXPECT_EQ(a1.ready_at_ms(), 0);
  EXPECT_EQ(a1.gpus_size(), 0);
  EXPECT_EQ(a2.ready_at_ms(), 1'700'000'001'000);
  EXPECT_EQ(a2.started_at_ms(), 1'700'000'002'000);
  ASSERT_EQ(a2.gpus_size(), 2);
  EXPECT_EQ(a2.gpus(1), 3);
  auto loaded = store_->LoadAttemptById(retry.id);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->ready_at_ms, 1'700'000'001'000);
}

// The stop longhauld asked of an attempt is stored with it, and comes back as written, so that
// it ends as asked after a restart; an attempt never asked to stop has none.
TEST_F(SqliteStoreTest, AnAttemptKeepsTheStopAskedOfIt) {
  RunRow run = MakeRun();
  ASSERT_TRUE(store_->Begin().ok());
  AttemptRow plain = InsertAttempt(run, 0, 1, "n1", v1::ATTEMPT_RUNNING);
  AttemptRow victim = InsertAttempt(run, 1, 1, "n1", v1::ATTEMPT_RUNNING);
  victim.stop_kind = "preempted";
  victim.stop_reason = "room for run 41 stage eval (high)";
  victim.stop_at_ms = 1'700'000'003'000;
  victim.stop_for_stage_id = 77;
  victim.borrowed = true;
  ASSERT_TRUE(store_->UpdateAttempt(victim).ok());
  ASSERT_TRUE(store_->Commit().ok());
  Reopen();
  auto loaded = store_->LoadAttempts(run.id);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->size(), 2u);
  const AttemptRow& p = (*loaded)[0].id == plain.id ? (*loaded)[0] : (*loaded)[1];
  const AttemptRow& v = (*loaded)[0].id == victim.id ? (*loaded)[0] : (*loaded)[1];
  EXPECT_EQ(p.stop_kind, "");
  EXPECT_EQ(p.stop_at_ms, std::nullopt);
  EXPECT_EQ(p.stop_for_stage_id, std::nullopt);
  EXPECT_EQ(v.stop_kind, "preempted");
  EXPECT_EQ(v.stop_reason, "room for run 41 stage eval (high)");
  EXPECT_EQ(v.stop_at_ms, std::optional<int64_t>(1'700'000'003'000));
  EXPECT_EQ(v.stop_for_stage_id, std::optional<int64_t>(77));
  EXPECT_FALSE(p.borrowed);
  EXPECT_TRUE(v.borrowed);
}

TEST_F(SqliteStoreTest, ListRunsFiltersAndPages) {
  for (int i = 0; i < 5; ++i) MakeRun(i % 2 ? "odd" : "even", i == 4 ? v1::RUN_FAILED
                                                                       : v1::RUN_SUCCEEDED);
  v1::ListRunsRequest req;
  req.set_limit(2);
  auto page1 = store_->ListRuns(req);
  ASSERT_TRUE(page1.ok());
  ASSERT_EQ(page1->runs_size(), 2);
  EXPECT_GT(page1->runs(0).id(), page1->runs(1).id());  // newest first
  req.set_page_token(page1->next_page_token());
  auto page2 = store_->ListRuns(req);
  ASSERT_EQ(page2->runs_size(), 2);
  EXPECT_LT(page2->runs(0).id(), page1->runs(1).id());

  v1::ListRunsRequest failed;
  failed.set_status("failed");
  EXPECT_EQ(store_->ListRuns(failed)->runs_size(), 1);
  v1::ListRunsRequest odd;
  odd.set_workflow("odd");
  EXPECT_EQ(store_->ListRuns(odd)->runs_size(), 2);
  EXPECT_EQ(store_->ListRuns(odd)->runs(0).stage_counts().at("waiting"), 2);
  v1::ListRunsRequest bad;
  bad.set_status("exploded");
  EXPECT_FALSE(store_->ListRuns(bad).ok());
}

TEST_F(SqliteStoreTest, ListRunsStageCountsFollowStageChanges) {
  RunRow run = MakeRun();
  v1::ListRunsRequest req;
  auto counts = [&] { return store_->ListRuns(req)->runs(0).stage_counts(); };
  EXPECT_EQ(counts().at("waiting"), 2);
  ASSERT_TRUE(store_->Begin().ok());
  stages_[0].status = v1::STAGE_RUNNING;
  ASSERT_TRUE(store_->UpdateStage(stages_[0]).ok());
  ASSERT_TRUE(store_->Commit().ok());
  EXPECT_EQ(counts().at("waiting"), 1);
  EXPECT_EQ(counts().at("running"), 1);
  ASSERT_TRUE(store_->Begin().ok());
  stages_[0].status = v1::STAGE_SUCCEEDED;
  stages_[1].status = v1::STAGE_FAILED;
  ASSERT_TRUE(store_->UpdateStage(stages_[0]).ok());
  ASSERT_TRUE(store_->UpdateStage(stages_[1]).ok());
  ASSERT_TRUE(store_->Commit().ok());
  auto after = counts();
  EXPECT_EQ(after.size(), 2u);
  EXPECT_EQ(after.at("succeeded"), 1);
  EXPECT_EQ(after.at("failed"), 1);
}

TEST_F(SqliteStoreTest, ListRunsFiltersByParamsIdParentAndFillsSummaryMetrics) {
  RunRow first = MakeRun();
  ASSERT_TRUE(store_->Begin().ok());
  RunRow second = first;  // a pivot of it, with another model
  second.params = {{"model", "/other"}};
  second.parent_run_id = first.id;
  ASSERT_TRUE(store_->InsertRun(&second).ok());
  AttemptRow at = InsertAttempt(first, 0, 1, "n1", v1::ATTEMPT_EXITED);
  ASSERT_TRUE(store_->InsertMetric({stages_[0].id, at.id, 1, "loss", 2.0, 0, 1}).ok());
  ASSERT_TRUE(store_->InsertMetric({stages_[0].id, at.id, 1, "loss", 1.5, 1, 2}).ok());
  ASSERT_TRUE(store_->Commit().ok());

  v1::ListRunsRequest by_param;
  (*by_param.mutable_params())["model"] = "/m";
  by_param.add_metrics("a.loss");
  auto got = store_->ListRuns(by_param);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->runs_size(), 1);
  EXPECT_EQ(got->runs(0).id(), first.id);
  EXPECT_DOUBLE_EQ(got->runs(0).summary_metrics().at("a.loss"), 1.5);
  v1::ListRunsRequest by_id;
  by_id.set_id(second.id);
  EXPECT_EQ(store_->ListRuns(by_id)->runs(0).params().at("model"), "/other");
  v1::ListRunsRequest children;
  children.set_parent_run_id(first.id);
  ASSERT_EQ(store_->ListRuns(children)->runs_size(), 1);
  EXPECT_EQ(store_->ListRuns(children)->runs(0).id(), second.id);
  v1::ListRunsRequest bad_metric;
  bad_metric.add_metrics("loss");
  EXPECT_EQ(store_->ListRuns(bad_metric).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SqliteStoreTest, MetricPagesFollowTheCursorAndCostsSumAttempts) {
  RunRow run = MakeRun("wf", v1::RUN_RUNNING, [](StageRow& s) {
    if (s.name == "a") s.resources.set_gpus(2);
  });
  ASSERT_TRUE(store_->Begin().ok());
  AttemptRow a1 = InsertAttempt(run, 0, 1, "n1", v1::ATTEMPT_EXITED);
  a1.started_at_ms = 0;
  a1.ended_at_ms = 1'800'000;  // half an hour on 2 GPUs
  ASSERT_TRUE(store_->UpdateAttempt(a1).ok());
  AttemptRow a2 = InsertAttempt(run, 0, 2, "n1", v1::ATTEMPT_EXITED);
  a2.started_at_ms = 2'000'000;
  a2.ended_at_ms = 3'800'000;  // and another
  ASSERT_TRUE(store_->UpdateAttempt(a2).ok());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store_->InsertMetric({stages_[0].id, a1.id, 1, i % 2 ? "acc" : "loss", 1.0 * i,
                                      i, i}).ok());
  }
  ASSERT_TRUE(store_->Commit().ok());

  v1::ListMetricsRequest req;
  req.set_run_id(run.id);
  req.set_stage("a");
  req.set_limit(3);
  auto p1 = store_->ListMetrics(req);
  ASSERT_TRUE(p1.ok()) << p1.status();
  ASSERT_EQ(p1->points_size(), 3);
  EXPECT_EQ(p1->points(1).name(), "acc");
  req.set_after(p1->next_cursor());
  auto p2 = store_->ListMetrics(req);
  ASSERT_EQ(p2->points_size(), 2);
  EXPECT_DOUBLE_EQ(p2->points(1).value(), 4.0);
  req.set_after(p2->next_cursor());
  EXPECT_EQ(store_->ListMetrics(req)->points_size(), 0);
  req.set_stage("nope");
  EXPECT_EQ(store_->ListMetrics(req).status().code(), absl::StatusCode::kNotFound);

  auto cost = store_->GetStageCost(run.id, "a");
  ASSERT_TRUE(cost.ok());
  EXPECT_DOUBLE_EQ(cost->wall_seconds, 3600.0);
  EXPECT_DOUBLE_EQ(cost->gpu_hours, 2.0);
  auto got = store_->GetRun(run.id, false);
  EXPECT_DOUBLE_EQ(got->stages(0).gpu_hours(), 2.0);
  EXPECT_DOUBLE_EQ(got->stages(1).gpu_hours(), 0.0);
  EXPECT_DOUBLE_EQ(got->gpu_hours(), 2.0);
  EXPECT_DOUBLE_EQ(store_->ListRuns({})->runs(0).gpu_hours(), 2.0);
}

TEST_F(SqliteStoreTest, MigrationKeepsTheTotalsOfRunsStoredBefore) {
  RunRow run = MakeRun("wf", v1::RUN_RUNNING, [](StageRow& s) {
    if (s.name == "a") s.resources.set_gpus(2);
    s.status = s.name == "a" ? v1::STAGE_RUNNING : v1::STAGE_WAITING;
  });
  ASSERT_TRUE(store_->Begin().ok());
  AttemptRow ended = InsertAttempt(run, 0, 1, "n1", v1::ATTEMPT_EXITED);
  ended.started_at_ms = 1'000;
  ended.ended_at_ms = 1'801'000;  // half an hour on 2 GPUs
  ASSERT_TRUE(store_->UpdateAttempt(ended).ok());
  AttemptRow running = InsertAttempt(run, 0, 2, "n1", v1::ATTEMPT_RUNNING);
  running.started_at_ms = 2'000'000;
  ASSERT_TRUE(store_->UpdateAttempt(running).ok());
  ASSERT_TRUE(store_->Commit().ok());
  store_.reset();
  {
    // As the schema was before the totals: no columns for them.
    auto db = Db::Open(dir_.Join("longhaul.db"), false, false);
    ASSERT_TRUE(db.ok());
    for (const char* column : {"submitted_by", "team", "priority", "budget_gpu_hours",
                               "budget_hard", "budget_raised_by", "budget_noticed",
                               "budget_hold"}) {
      ASSERT_TRUE((*db)->Exec(std::string("ALTER TABLE runs DROP COLUMN ") + column).ok());
    }
    for (const char* column : {"stage_counts_json", "gpu_ms_ended", "gpus_running",
                               "gpu_start_ms_running"}) {
      ASSERT_TRUE((*db)->Exec(std::string("ALTER TABLE runs DROP COLUMN ") + column).ok());
    }
    ASSERT_TRUE((*db)->Exec("DROP TABLE identity").ok());
    ASSERT_TRUE((*db)->Exec("DROP TABLE gpus; DROP TABLE gpu_series").ok());
    ASSERT_TRUE((*db)
                    ->Exec("DROP TABLE run_sources; DROP TABLE attempt_environments; "
                           "DROP TABLE agent_engine_versions")
                    .ok());
    ASSERT_TRUE((*db)->Exec("ALTER TABLE attempts DROP COLUMN ready_at_ms").ok());
    for (const char* column :
         {"stop_kind", "stop_reason", "stop_at_ms", "stop_for_stage_id", "borrowed"}) {
      ASSERT_TRUE((*db)->Exec(std::string("ALTER TABLE attempts DROP COLUMN ") + column).ok());
    }
    ASSERT_TRUE((*db)->Exec("DROP TABLE stage_judged_from").ok());
    ASSERT_TRUE((*db)->Exec("DROP TABLE agent_drains; DROP TABLE tags; DROP TABLE run_tag_uses; "
                            "DROP TABLE budgets").ok());
    ASSERT_TRUE((*db)->Exec("DROP TABLE reservations; DROP TABLE quotas").ok());
    ASSERT_TRUE((*db)->Exec("PRAGMA user_version=11").ok());
  }
  Reopen();
  auto db = Db::Open(dir_.Join("longhaul.db"), false, true);
  ASSERT_TRUE(db.ok());
  v1::Run shown;
  std::optional<RunTotals> totals;
  ASSERT_TRUE(internal::ReadRunFields(db->get(), run.id, &shown, &totals).ok());
  ASSERT_TRUE(totals.has_value());
  EXPECT_EQ(totals->stage_counts, (std::map<std::string, int64_t>{{"running", 1},
                                                                  {"waiting", 1}}));
  EXPECT_EQ(totals->gpu_ms_ended, 2 * 1'800'000);
  EXPECT_EQ(totals->gpus_running, 2);
  EXPECT_EQ(totals->gpu_start_ms_running, 2 * 2'000'000);
  // An hour later the running attempt adds two GPU hours to the ended one's one.
  EXPECT_DOUBLE_EQ(totals->GpuHoursAt(2'000'000 + 3'600'000), 3.0);
}

TEST_F(SqliteStoreTest, FindsTheLatestSucceededStageByCacheKey) {
  RunRow r1 = MakeRun("wf", v1::RUN_RUNNING, [](StageRow& s) {
    if (s.name == "a") s.cache_key = "k1";
  });
  RunRow r2 = MakeRun();
  ASSERT_TRUE(store_->Begin().ok());
  StageRow s = stages_[0];  // run 1's 'a'
  s.status = v1::STAGE_SUCCEEDED;
  s.outputs = {{"endpoint", "http://x"}};
  ASSERT_TRUE(store_->UpdateStage(s).ok());
  ASSERT_TRUE(store_->Commit().ok());
  auto hit = store_->FindCacheHit("k1", r2.id);
  ASSERT_TRUE(hit.ok());
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ((*hit)->run_id, r1.id);
  EXPECT_EQ((*hit)->outputs.at("endpoint"), "http://x");
  EXPECT_FALSE(store_->FindCacheHit("k1", r1.id)->has_value());
  EXPECT_FALSE(store_->FindCacheHit("nope", r2.id)->has_value());
}

// A cache lookup is one seek of the partial index that holds only finished stages (a
// submission's 100,000 lookups each cost that), and migration 11 put that index in place of
// the one over every stage.
TEST_F(SqliteStoreTest, ACacheLookupSeeksThePartialIndexOfFinishedStages) {
  MakeRun();
  auto db = Db::Open(dir_.Join("longhaul.db"), false, /*read_only=*/true);
  ASSERT_TRUE(db.ok()) << db.status();
  auto plan = (*db)->Prepare(std::string("EXPLAIN QUERY PLAN ") + internal::kCacheHitQuery);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::string steps;
  while ((*plan)->Step().value_or(false)) steps += (*plan)->Text(3) + "\n";
  (*plan)->Reset();
  EXPECT_EQ(steps, "SEARCH stages USING INDEX stages_by_cache_hit (cache_key=?)\n");

  auto indexes = (*db)->Prepare(
      "SELECT group_concat(name) FROM sqlite_master WHERE type = 'index' AND name LIKE "
      "'stages_by_cache\\_%' ESCAPE '\\'");
  ASSERT_TRUE(indexes.ok());
  ASSERT_TRUE((*indexes)->Step().value_or(false));
  EXPECT_EQ((*indexes)->Text(0), "stages_by_cache_hit");
  (*indexes)->Reset();
}

// What planning reads in bulk answers as the one-at-a-time reads do.
TEST_F(SqliteStoreTest, PlanningReadsAnswerEachKeyAndStage) {
  RunRow r1 = MakeRun("wf", v1::RUN_RUNNING, [](StageRow& s) {
    s.cache_key = "k-" + s.name;
    s.fingerprint_json = "{\"of\":\"" + s.name + "\"}";
  });
  ASSERT_TRUE(store_->Begin().ok());
  StageRow a = stages_[0];
  a.status = v1::STAGE_SUCCEEDED;
  ASSERT_TRUE(store_->UpdateStage(a).ok());
  ASSERT_TRUE(store_->Commit().ok());

  // 'b' has not succeeded; "" asks nothing.
  auto hits = store_->FindCacheHits({"k-b", "", "k-a", "nope"}, /*exclude_run_id=*/0);
  ASSERT_TRUE(hits.ok()) << hits.status();
  ASSERT_EQ(hits->size(), 4u);
  EXPECT_FALSE((*hits)[0].has_value());
  EXPECT_FALSE((*hits)[1].has_value());
  ASSERT_TRUE((*hits)[2].has_value());
  EXPECT_EQ((*hits)[2]->stage_id, a.id);
  EXPECT_EQ((*hits)[2]->fingerprint_json, "{\"of\":\"a\"}");
  EXPECT_FALSE((*hits)[3].has_value());
  EXPECT_FALSE((*store_->FindCacheHits({"k-a"}, r1.id))[0].has_value());

  auto keys = store_->ReadStageKeys(r1.id);
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ((*keys)[0].name, "a");
  EXPECT_EQ((*keys)[0].cache_key, "k-a");
  EXPECT_EQ((*keys)[1].id, stages_[1].id);
  EXPECT_EQ((*keys)[1].cache_key, "k-b");

  auto jsons = store_->ReadFingerprintJsons({stages_[1].id, 999'999, a.id});
  ASSERT_TRUE(jsons.ok()) << jsons.status();
  ASSERT_EQ(jsons->size(), 3u);
  EXPECT_EQ((*jsons)[0], "{\"of\":\"b\"}");
  EXPECT_FALSE((*jsons)[1].has_value());
  EXPECT_EQ((*jsons)[2], "{\"of\":\"a\"}");
}

TEST_F(SqliteStoreTest, UncommittedWritesAreNotVisibleAndRollBack) {
  RunRow run = MakeRun();
  ASSERT_TRUE(store_->Begin().ok());
  RunRow changed = run;
  changed.status = v1::RUN_FAILED;
  ASSERT_TRUE(store_->UpdateRun(changed).ok());
  EXPECT_EQ(store_->GetRun(run.id, false)->status(), v1::RUN_RUNNING);  // reader: last commit
  store_->Rollback();
  EXPECT_EQ(store_->GetRun(run.id, false)->status(), v1::RUN_RUNNING);
}

TEST_F(SqliteStoreTest, AgentsRoundTrip) {
  ASSERT_TRUE(store_->Begin().ok());
  AgentRow a;
  a.id = "node-1";
  a.hostname = "gpu01";
  a.resources.set_cpus(64);
  a.resources.set_gpus(8);
  a.labels = {{"rack", "b"}};
  a.shared_paths = {"/lustre", "/nfs/home"};
  a.first_seen_ms = 1;
  a.last_seen_ms = 2;
  ASSERT_TRUE(store_->UpsertAgent(a).ok());
  a.last_seen_ms = 3;
  ASSERT_TRUE(store_->UpsertAgent(a).ok());
  ASSERT_TRUE(store_->Commit().ok());
  auto agents = store_->LoadAgents();
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ((*agents)[0].resources.gpus(), 8);
  EXPECT_EQ((*agents)[0].last_seen_ms, 3);
  EXPECT_EQ((*agents)[0].labels.at("rack"), "b");
  EXPECT_EQ((*agents)[0].shared_paths, (std::vector<std::string>{"/lustre", "/nfs/home"}));
}

TEST_F(SqliteStoreTest, AuditTrailListsNewestFirstAndPages) {
  ASSERT_TRUE(store_->Begin().ok());
  for (int i = 1; i <= 3; ++i) {
    v1::AuditEntry e;
    e.set_ts_ms(1000 * i);
    e.set_principal("olga");
    e.set_role("operator");
    e.set_peer("ipv4:10.0.0.7:4000");
    e.set_action("SubmitRun");
    e.set_target("run " + std::to_string(i));
    e.set_result("OK");
    ASSERT_TRUE(store_->InsertAudit(e).ok());
  }
  ASSERT_TRUE(store_->Commit().ok());
  v1::ListAuditRequest req;
  req.set_limit(2);
  Result<v1::ListAuditResponse> page = store_->ListAudit(req);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->entries_size(), 2);
  EXPECT_EQ(page->entries(0).target(), "run 3");
  EXPECT_EQ(page->entries(0).peer(), "ipv4:10.0.0.7:4000");
  EXPECT_EQ(page->entries(1).target(), "run 2");
  req.set_before_id(page->entries(1).id());
  page = store_->ListAudit(req);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->entries_size(), 1);
  EXPECT_EQ(page->entries(0).target(), "run 1");
  EXPECT_EQ(page->entries(0).ts_ms(), 1000);
}

}  // namespace
}  // namespace longhaul::store
