// The internal pieces of longhaul_workflow that have rules of their own: the needs graph,
// byte sizes and key suggestions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/workflow/graph.h"
#include "daemon/workflow/yaml_reader.h"

namespace longhaul::workflow {
namespace {

TEST(GraphTest, TopologicalOrderBreaksTiesByFileOrder) {
  // 0:join needs 2 and 3; 1:lonely; 2:left needs 4; 3:right needs 4; 4:root.
  NeedsGraph g = {{2, 3}, {}, {4}, {4}, {}};
  EXPECT_THAT(TopologicalOrder(g), ::testing::ElementsAre(1, 4, 2, 3, 0));
}

TEST(GraphTest, FindsEveryCycleOnce) {
  // 0 needs 1 and 2, 1 needs 2, 2 needs 0: the shortest cycle through 0 is 0 -> 2 -> 0.
  // 3 and 4 need each other; 5 is outside every cycle.
  NeedsGraph g = {{1, 2}, {2}, {0}, {4}, {3}, {}};
  std::vector<std::vector<int>> cycles = FindCycles(g);
  ASSERT_EQ(cycles.size(), 2u);
  EXPECT_THAT(cycles[0], ::testing::ElementsAre(0, 2));
  EXPECT_THAT(cycles[1], ::testing::ElementsAre(3, 4));
  EXPECT_TRUE(FindCycles({{}, {0}, {0, 1}}).empty());
}

TEST(GraphTest, ReachabilityFollowsNeedsTransitively) {
  NeedsGraph g = {{}, {0}, {1}, {0}, {5}, {4}};
  Reachability up(g);
  EXPECT_TRUE(up.Needs(2, 0));
  EXPECT_TRUE(up.Needs(2, 1));
  EXPECT_TRUE(up.Needs(3, 0));
  EXPECT_FALSE(up.Needs(3, 1));
  EXPECT_FALSE(up.Needs(0, 0));
  EXPECT_FALSE(up.Needs(0, 3));
  EXPECT_TRUE(up.Needs(4, 4));  // a cycle: 4 needs 5 needs 4
  EXPECT_FALSE(up.Needs(4, 0));
}

TEST(GraphTest, LongChainsNeedNoRecursion) {
  // Stage i needs i - 1: a recursive search would overflow the stack long before the end.
  const int n = 300'000;
  NeedsGraph g(n);
  for (int i = 1; i < n; ++i) g[i].push_back(i - 1);
  std::vector<int> order = TopologicalOrder(g);
  ASSERT_EQ(order.size(), static_cast<size_t>(n));
  EXPECT_EQ(order.front(), 0);
  EXPECT_EQ(order.back(), n - 1);
  EXPECT_TRUE(FindCycles(g).empty());
  g[0].push_back(n - 1);  // close the chain into one cycle through every stage
  std::vector<std::vector<int>> cycles = FindCycles(g);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0].size(), static_cast<size_t>(n));
  Reachability up(g);
  EXPECT_TRUE(up.Needs(n - 1, 0));
}

TEST(ByteSizeTest, UnitsArePowersOf1024) {
  EXPECT_EQ(*ParseByteSize("2048"), 2048);
  EXPECT_EQ(*ParseByteSize("16G"), 16LL << 30);
  EXPECT_EQ(*ParseByteSize("16GiB"), 16LL << 30);
  EXPECT_EQ(*ParseByteSize("16gb"), 16LL << 30);
  EXPECT_EQ(*ParseByteSize("512Mi"), 512LL << 20);
  EXPECT_EQ(*ParseByteSize("1.5K"), 1536);
  EXPECT_EQ(*ParseByteSize("2T"), 2LL << 40);
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("G").ok());
  EXPECT_FALSE(ParseByteSize("-1G").ok());
  EXPECT_FALSE(ParseByteSize("12X").ok());
  EXPECT_FALSE(ParseByteSize("1GG").ok());
  EXPECT_FALSE(ParseByteSize("99999P").ok());
}

TEST(SuggestTest, EditDistanceCountsTranspositionsOnce) {
  EXPECT_EQ(EditDistance("needs", "needs"), 0);
  EXPECT_EQ(EditDistance("neds", "needs"), 1);
  EXPECT_EQ(EditDistance("retyr", "retry"), 1);
  EXPECT_EQ(EditDistance("", "abc"), 3);
  std::vector<std::string> keys = {"run", "needs", "retry", "stall_timeout"};
  EXPECT_EQ(DidYouMean("retyr", keys), " (did you mean 'retry'?)");
  EXPECT_EQ(DidYouMean("stall_timout", keys), " (did you mean 'stall_timeout'?)");
  EXPECT_EQ(DidYouMean("x", keys), "");
  EXPECT_EQ(DidYouMean("completely_else", keys), "");
}

}  // namespace
}  // namespace longhaul::workflow
