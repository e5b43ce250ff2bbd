#include "daemon/scheduler/watcher.h"

#include <gtest/gtest.h>

#include "core/strings.h"
#include "proto/stage_merge.h"

namespace longhaul::scheduler {
namespace {

v1::Stage MakeStage(int i, v1::StageStatus status = v1::STAGE_READY) {
  v1::Stage s;
  s.set_name(StrCat("s", i));
  s.set_status(status);
  return s;
}

v1::RunUpdate Update(bool snapshot, int from, int to, v1::StageStatus status = v1::STAGE_READY) {
  v1::RunUpdate u;
  u.set_snapshot(snapshot);
  u.mutable_run()->set_id(7);
  u.mutable_run()->set_status(v1::RUN_RUNNING);
  for (int i = from; i < to; ++i) *u.mutable_run()->add_stages() = MakeStage(i, status);
  return u;
}

TEST(WatcherTest, ASmallSnapshotIsOneUpdateMarkedComplete) {
  Watcher w;
  w.Push(Update(true, 0, 3), false);
  v1::RunUpdate u;
  bool final = true;
  ASSERT_TRUE(w.Next(&u, &final, 0));
  EXPECT_TRUE(u.snapshot());
  EXPECT_TRUE(u.snapshot_complete());
  EXPECT_FALSE(final);
  EXPECT_EQ(u.run().stages_size(), 3);
  EXPECT_FALSE(w.Next(&u, &final, 0));
}

TEST(WatcherTest, ABigSnapshotComesInBoundedChunksAndChangesMeanwhileAreNotLost) {
  Watcher w;
  const int n = 2 * kMaxStagesPerMessage + 10;
  w.Push(Update(true, 0, n), false);
  v1::RunUpdate u;
  bool final = false;
  ASSERT_TRUE(w.Next(&u, &final, 0));
  EXPECT_TRUE(u.snapshot());
  EXPECT_FALSE(u.snapshot_complete());
  EXPECT_EQ(u.run().stages_size(), kMaxStagesPerMessage);
  MergedRun merged;
  merged.Apply(u);
  // s0 was sent already: it goes out again; s1500 was not: it is replaced where it waits.
  v1::RunUpdate change = Update(false, 0, 0);
  change.mutable_run()->set_status(v1::RUN_RUNNING);
  *change.mutable_run()->add_stages() = MakeStage(0, v1::STAGE_RUNNING);
  *change.mutable_run()->add_stages() = MakeStage(1500, v1::STAGE_RUNNING);
  w.Push(change, false);
  int updates = 1;
  while (w.Next(&u, &final, 0)) {
    EXPECT_FALSE(u.snapshot());
    EXPECT_LE(u.run().stages_size(), kMaxStagesPerMessage);
    merged.Apply(u);
    ++updates;
    if (u.snapshot_complete()) break;
  }
  EXPECT_TRUE(u.snapshot_complete());
  EXPECT_EQ(updates, 3);
  ASSERT_EQ(merged.run().stages_size(), n);
  EXPECT_EQ(merged.Find("s0")->status(), v1::STAGE_RUNNING);
  EXPECT_EQ(merged.Find("s1500")->status(), v1::STAGE_RUNNING);
  EXPECT_EQ(merged.Find("s1501")->status(), v1::STAGE_READY);
  EXPECT_FALSE(w.Next(&u, &final, 0));
}

TEST(WatcherTest, ABigChangeIsChunkedAndOnlyItsLastChunkIsFinal) {
  Watcher w;
  w.Push(Update(true, 0, 1), false);
  v1::RunUpdate u;
  bool final = false;
  ASSERT_TRUE(w.Next(&u, &final, 0));
  v1::RunUpdate end = Update(false, 0, kMaxStagesPerMessage + 1, v1::STAGE_CANCELLED);
  end.mutable_run()->set_status(v1::RUN_CANCELLED);
  w.Push(end, true);
  ASSERT_TRUE(w.Next(&u, &final, 0));
  EXPECT_FALSE(final);
  EXPECT_FALSE(u.snapshot_complete());
  EXPECT_EQ(u.run().stages_size(), kMaxStagesPerMessage);
  EXPECT_EQ(u.run().status(), v1::RUN_CANCELLED);
  ASSERT_TRUE(w.Next(&u, &final, 0));
  EXPECT_TRUE(final);
  EXPECT_EQ(u.run().stages_size(), 1);
}

TEST(WatcherTest, PendingChangesToOneStageMergeIntoItsNewestState) {
  Watcher w;
  w.Push(Update(true, 0, 2), false);
  v1::RunUpdate u;
  bool final = false;
  ASSERT_TRUE(w.Next(&u, &final, 0));
  w.Push(Update(false, 1, 2, v1::STAGE_RUNNING), false);
  w.Push(Update(false, 1, 2, v1::STAGE_SUCCEEDED), false);
  ASSERT_TRUE(w.Next(&u, &final, 0));
  ASSERT_EQ(u.run().stages_size(), 1);
  EXPECT_EQ(u.run().stages(0).status(), v1::STAGE_SUCCEEDED);
  EXPECT_FALSE(u.snapshot());
}

TEST(WatcherTest, AnUpdateWithoutStagesStillCarriesTheRunFields) {
  Watcher w;
  w.Push(Update(true, 0, 1), false);
  v1::RunUpdate u;
  bool final = false;
  ASSERT_TRUE(w.Next(&u, &final, 0));
  v1::RunUpdate done = Update(false, 0, 0);
  done.mutable_run()->set_status(v1::RUN_SUCCEEDED);
  w.Push(done, true);
  ASSERT_TRUE(w.Next(&u, &final, 0));
  EXPECT_TRUE(final);
  EXPECT_EQ(u.run().status(), v1::RUN_SUCCEEDED);
  EXPECT_EQ(u.run().stages_size(), 0);
}

TEST(MergedRunTest, UpsertsByNameKeepingFirstSeenOrder) {
  MergedRun m;
  m.Apply(Update(true, 0, 3));
  std::vector<int> touched = m.Apply(Update(false, 1, 5, v1::STAGE_RUNNING));
  EXPECT_EQ(touched, (std::vector<int>{1, 2, 3, 4}));
  ASSERT_EQ(m.run().stages_size(), 5);
  EXPECT_EQ(m.run().stages(0).status(), v1::STAGE_READY);
  EXPECT_EQ(m.run().stages(4).name(), "s4");
  EXPECT_EQ(m.fields().stages_size(), 0);
  EXPECT_EQ(m.fields().id(), 7);
  m.Apply(Update(true, 9, 10));
  ASSERT_EQ(m.run().stages_size(), 1);
  EXPECT_EQ(m.Find("s0"), nullptr);
}

}  // namespace
}  // namespace longhaul::scheduler
