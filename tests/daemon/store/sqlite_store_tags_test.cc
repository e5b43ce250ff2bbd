// Tags in the store: set, move, remove, list by run, and what a run's tag references resolved
// to, on a real SQLite file that is reopened in between.
#include <gtest/gtest.h>

#include "daemon/store/sqlite_store.h"
#include "tests/daemon/store/store_fixture.h"
#include "tests/testing/test_util.h"

namespace longhaul::store {
namespace {

class TagStoreTest : public ReopenedStoreTest {
 protected:
  // A run with one stage `train` whose outputs are `outputs`; returns the stage row.
  StageRow MakeTrainRun(const std::map<std::string, std::string>& outputs) {
    EXPECT_TRUE(store_->Begin().ok());
    auto wf = store_->PutWorkflow("wf", "name: wf", "hash-wf", 1000);
    EXPECT_TRUE(wf.ok());
    RunRow run;
    run.workflow_id = *wf;
    run.workflow_name = "wf";
    run.status = v1::RUN_SUCCEEDED;
    run.created_at_ms = 1000;
    EXPECT_TRUE(store_->InsertRun(&run).ok());
    StageRow s;
    s.run_id = run.id;
    s.name = "train";
    s.status = v1::STAGE_SUCCEEDED;
    s.outputs = outputs;
    EXPECT_TRUE(store_->InsertStage(&s).ok());
    EXPECT_TRUE(store_->UpdateStage(s).ok());
    EXPECT_TRUE(store_->Commit().ok());
    return s;
  }

  TagRow TagOf(const std::string& name, const StageRow& s, const std::string& by, int64_t at) {
    return TagRow{name, s.run_id, s.name, s.id, std::nullopt, by, at};
  }

  Status Write(const std::function<Status()>& write) {
    RETURN_IF_ERROR(store_->Begin());
    Status st = write();
    if (!st.ok()) {
      store_->Rollback();
      return st;
    }
    return store_->Commit();
  }
};

TEST_F(TagStoreTest, SetMoveListAndRemoveSurviveReopen) {
  StageRow first = MakeTrainRun({{"drafter", "/data/runs/1/train/drafter"}});
  StageRow second = MakeTrainRun({{"drafter", "/data/runs/2/train/drafter"}});
  ASSERT_TRUE(
      Write([&] { return store_->PutTag(TagOf("best-drafter", first, "alice", 5000)); }).ok());
  ASSERT_TRUE(Write([&] { return store_->PutTag(TagOf("baseline", first, "bob", 6000)); }).ok());
  Reopen();

  auto targets = store_->ReadTagTargets({"best-drafter", "nope"});
  ASSERT_TRUE(targets.ok()) << targets.status();
  ASSERT_EQ(targets->size(), 1u);  // an unknown name is left out
  EXPECT_EQ((*targets)[0].tag.run_id, first.run_id);
  EXPECT_EQ((*targets)[0].tag.set_by, "alice");
  EXPECT_EQ((*targets)[0].outputs.at("drafter"), "/data/runs/1/train/drafter");

  // Moving replaces the row: one tag of that name, now on the second run.
  ASSERT_TRUE(
      Write([&] { return store_->PutTag(TagOf("best-drafter", second, "carol", 7000)); }).ok());
  auto all = store_->ListTags(0);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "baseline");
  EXPECT_EQ((*all)[1].name, "best-drafter");
  EXPECT_EQ((*all)[1].run_id, second.run_id);
  EXPECT_EQ((*all)[1].set_by, "carol");
  EXPECT_EQ((*all)[1].set_at_ms, 7000);
  auto on_first = store_->ListTags(first.run_id);
  ASSERT_TRUE(on_first.ok());
  ASSERT_EQ(on_first->size(), 1u);
  EXPECT_EQ((*on_first)[0].name, "baseline");

  // Retention keeps what a tag names.
  auto gc = store_->PlanRunGc(second.run_id);
  ASSERT_TRUE(gc.ok()) << gc.status();
  EXPECT_EQ(gc->kept, std::vector<std::string>{"train: tag best-drafter names its result"});

  bool removed = false;
  ASSERT_TRUE(Write([&]() -> Status {
                ASSIGN_OR_RETURN(removed, store_->DeleteTag("baseline"));
                return OkStatus();
              }).ok());
  EXPECT_TRUE(removed);
  ASSERT_TRUE(Write([&]() -> Status {
                ASSIGN_OR_RETURN(removed, store_->DeleteTag("baseline"));
                return OkStatus();
              }).ok());
  EXPECT_FALSE(removed);  // already gone
  ASSERT_TRUE(store_->Begin().ok());
  auto loaded = store_->LoadTag("baseline");
  ASSERT_TRUE(loaded.ok());
  EXPECT_FALSE(loaded->has_value());
  store_->Rollback();
}

TEST_F(TagStoreTest, RunTagUsesAreReadBackOnBothConnections) {
  StageRow tagged = MakeTrainRun({{"drafter", "/d"}});
  std::vector<TagUseRow> uses = {
      {"best-drafter.outputs.drafter", "best-drafter", "/d", tagged.run_id, "train", tagged.id},
      {"best-drafter.run", "best-drafter", std::to_string(tagged.run_id), tagged.run_id, "train",
       tagged.id}};
  ASSERT_TRUE(Write([&] { return store_->PutTagUses(42, uses); }).ok());
  Reopen();
  auto read = store_->ReadTagUses(42);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].key, "best-drafter.outputs.drafter");
  EXPECT_EQ((*read)[0].value, "/d");
  EXPECT_EQ((*read)[1].value, std::to_string(tagged.run_id));
  EXPECT_EQ((*read)[1].from_stage_id, tagged.id);
  ASSERT_TRUE(store_->Begin().ok());
  auto loaded = store_->LoadTagUses(42);
  store_->Rollback();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->size(), 2u);
  auto none = store_->ReadTagUses(43);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace longhaul::store
