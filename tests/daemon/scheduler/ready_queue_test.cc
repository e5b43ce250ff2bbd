#include "daemon/scheduler/ready_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace longhaul::scheduler {
namespace {

using Entry = ReadyQueue::Entry;
using Outcome = ReadyQueue::Outcome;

v1::Resources Cpus(double cpus, int gpus = 0) {
  v1::Resources r;
  r.set_cpus(cpus);
  r.set_gpus(gpus);
  return r;
}

TEST(ReadyQueueTest, OffersOldestFirstAcrossShapes) {
  ReadyQueue q;
  q.Add({2, 0}, Cpus(1));
  q.Add({1, 3}, Cpus(2));
  q.Add({1, 1}, Cpus(1));
  q.Add({1, 1}, Cpus(1));  // already there
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.shapes(), 2u);
  std::vector<Entry> seen;
  q.Pass([&](Entry e) {
    seen.push_back(e);
    return Outcome::kTaken;
  });
  EXPECT_EQ(seen, (std::vector<Entry>{{1, 1}, {1, 3}, {2, 0}}));
  EXPECT_TRUE(q.empty());
}

TEST(ReadyQueueTest, AShapeWithoutRoomIsAskedOncePerPassAndKept) {
  ReadyQueue q;
  for (int i = 0; i < 1000; ++i) q.Add({1, i}, Cpus(1, 8));  // 8 GPUs: never fits below
  q.Add({2, 0}, Cpus(1));
  q.Add({2, 1}, Cpus(1));
  int asked_big = 0;
  std::vector<Entry> taken;
  q.Pass([&](Entry e) {
    if (e.run_id == 1) {
      ++asked_big;
      return Outcome::kNoRoom;
    }
    taken.push_back(e);
    return Outcome::kTaken;
  });
  EXPECT_EQ(asked_big, 1);
  EXPECT_EQ(taken, (std::vector<Entry>{{2, 0}, {2, 1}}));
  EXPECT_EQ(q.size(), 1000u);
  EXPECT_TRUE(q.Contains({1, 0}, Cpus(1, 8)));
}

TEST(ReadyQueueTest, ASkippedEntryStaysAndTheNextOfItsShapeIsOffered) {
  // Services of one shape: the first has no consumer that could run, the second has; a task
  // of the same shape behind them. Skipping the first must not hold back the others.
  ReadyQueue q;
  for (int i = 0; i < 3; ++i) q.Add({1, i}, Cpus(0.5));
  std::vector<Entry> seen;
  q.Pass([&](Entry e) {
    seen.push_back(e);
    return e.index == 0 ? Outcome::kSkip : Outcome::kTaken;
  });
  EXPECT_EQ(seen, (std::vector<Entry>{{1, 0}, {1, 1}, {1, 2}}));
  EXPECT_EQ(q.size(), 1u);
  EXPECT_TRUE(q.Contains({1, 0}, Cpus(0.5)));
  // The next pass offers it again, first.
  seen.clear();
  q.Pass([&](Entry e) {
    seen.push_back(e);
    return Outcome::kNoRoom;
  });
  EXPECT_EQ(seen, (std::vector<Entry>{{1, 0}}));
}

TEST(ReadyQueueTest, PlaceMayRemoveAndAddEntries) {
  ReadyQueue q;
  q.Add({1, 0}, Cpus(1));
  q.Add({1, 1}, Cpus(1));
  q.Add({1, 2}, Cpus(1));
  std::vector<Entry> seen;
  q.Pass([&](Entry e) {
    seen.push_back(e);
    q.Remove(e, Cpus(1));
    if (e == Entry{1, 0}) {
      q.Remove({1, 1}, Cpus(1));  // failed to start, its dependent left the set
      q.Add({1, 5}, Cpus(1));     // became ready meanwhile: offered in this pass
      q.Add({3, 0}, Cpus(4));     // a new shape: offered in this pass too
    }
    return Outcome::kTaken;
  });
  EXPECT_EQ(seen, (std::vector<Entry>{{1, 0}, {1, 2}, {1, 5}, {3, 0}}));
  EXPECT_TRUE(q.empty());
}

TEST(ReadyQueueTest, RemoveNeedsTheShapeItWasAddedWith) {
  ReadyQueue q;
  q.Add({1, 0}, Cpus(1));
  q.Remove({1, 0}, Cpus(2));
  EXPECT_EQ(q.size(), 1u);
  q.Remove({1, 0}, Cpus(1));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.shapes(), 0u);
}

}  // namespace
}  // namespace longhaul::scheduler
