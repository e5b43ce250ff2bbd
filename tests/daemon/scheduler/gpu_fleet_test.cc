// GpuFleet (service states of GPUs) and GpuSeries (bounded per-attempt telemetry).
#include "daemon/scheduler/gpu_fleet.h"

#include <gtest/gtest.h>

#include "daemon/scheduler/gpu_series.h"
#include "daemon/scheduler/gpu_telemetry.h"

namespace longhaul::scheduler {
namespace {

v1::GpuReading Reading(int index, int64_t ts, double util, bool healthy = true,
                       std::vector<std::pair<int, std::string>> xids = {}) {
  v1::GpuReading r;
  r.set_index(index);
  r.set_uuid("GPU-" + std::to_string(index));
  r.set_ts_ms(ts);
  r.set_sm_util_pct(util);
  r.set_mem_used_bytes(int64_t{1} << 30);
  r.set_mem_total_bytes(int64_t{80} << 30);
  r.set_power_watts(500);
  r.set_healthy(healthy);
  if (!healthy) r.set_fault("XID 79 (GPU has fallen off the bus)");
  for (const auto& [xid, klass] : xids) {
    auto* x = r.add_xids();
    x->set_xid(xid);
    x->set_klass(klass);
  }
  return r;
}

TEST(GpuFleetTest, AFaultQuarantinesOnceAndAnApplicationXidDoesNot) {
  GpuFleet fleet({.cooldown_ms = 1000, .passes_to_return = 2});
  auto out = fleet.OnReport("a1", {Reading(0, 1, 50, true, {{13, "application"}})}, 1);
  EXPECT_TRUE(out.quarantined.empty());
  ASSERT_EQ(out.app_xids.size(), 1u);
  EXPECT_TRUE(fleet.Offered("a1", 0));

  out = fleet.OnReport("a1", {Reading(0, 2, 50, false, {{79, "hardware"}})}, 2);
  ASSERT_EQ(out.quarantined.size(), 1u);
  EXPECT_EQ(out.quarantined[0].xid, 79);
  EXPECT_FALSE(fleet.Offered("a1", 0));
  EXPECT_TRUE(fleet.Offered("a1", 1)) << "a GPU never heard of is in service";
  // Still unhealthy in the next report: not quarantined again.
  out = fleet.OnReport("a1", {Reading(0, 3, 50, false)}, 3);
  EXPECT_TRUE(out.quarantined.empty());
  auto dirty = fleet.TakeDirty();
  ASSERT_EQ(dirty.size(), 1u);
  EXPECT_EQ(dirty[0].health, "quarantined");
  EXPECT_EQ(dirty[0].by, "agent");
}

TEST(GpuFleetTest, PreflightsAfterTheCooldownReturnTheGpuAfterEnoughPasses) {
  GpuFleet fleet({.cooldown_ms = 1000, .passes_to_return = 2});
  fleet.OnReport("a1", {Reading(0, 1, 0, false)}, 100);
  EXPECT_TRUE(fleet.ChecksDue("a1", 500).empty()) << "cooling down";
  EXPECT_EQ(fleet.NextCheckMs(), 1100);
  EXPECT_EQ(fleet.ChecksDue("a1", 1100), std::vector<int>{0});
  EXPECT_TRUE(fleet.ChecksDue("a1", 1200).empty()) << "one asked at a time";
  EXPECT_FALSE(fleet.OnChecked("a1", 0, true, "PASS", 1300));
  EXPECT_FALSE(fleet.Offered("a1", 0));
  // A failure starts the count again.
  EXPECT_EQ(fleet.ChecksDue("a1", 2300), std::vector<int>{0});
  EXPECT_FALSE(fleet.OnChecked("a1", 0, false, "FAIL", 2400));
  EXPECT_EQ(fleet.ChecksDue("a1", 3400), std::vector<int>{0});
  EXPECT_FALSE(fleet.OnChecked("a1", 0, true, "PASS", 3500));
  EXPECT_EQ(fleet.ChecksDue("a1", 4500), std::vector<int>{0});
  EXPECT_TRUE(fleet.OnChecked("a1", 0, true, "PASS", 4600));
  EXPECT_TRUE(fleet.Offered("a1", 0));
  EXPECT_EQ(fleet.Find("a1", 0)->by, "preflight");
}

TEST(GpuFleetTest, DrainedGpusAreNotCheckedAndUndrainBringsThemBack) {
  GpuFleet fleet;
  fleet.Drain("a1", 2, "GPU-2", "drained by alice: fan", "alice", 10);
  EXPECT_FALSE(fleet.Offered("a1", 2));
  EXPECT_TRUE(fleet.ChecksDue("a1", int64_t{1} << 40).empty());
  v1::GpuInfo info;
  info.set_index(2);
  fleet.Fill("a1", &info);
  EXPECT_EQ(info.health(), "drained");
  EXPECT_EQ(info.uuid(), "GPU-2");
  fleet.Undrain("a1", 2, "alice", 20);
  EXPECT_TRUE(fleet.Offered("a1", 2));
  // Load replaces everything, as after a failed commit.
  fleet.Load({store::GpuRow{"a1", 0, "GPU-0", "quarantined", "XID 48", 5, "agent", 0}});
  EXPECT_FALSE(fleet.Offered("a1", 0));
  EXPECT_TRUE(fleet.Offered("a1", 2));
}

// After a restart (Load), the agent still calling a GPU unhealthy that an admin has brought
// back since is not a new fault; a hardware XID in that report is.
TEST(GpuFleetTest, AnUnhealthyVerdictHeardBeforeARestartDoesNotQuarantineAgain) {
  GpuFleet fleet;
  fleet.Load({store::GpuRow{"a1", 0, "GPU-0", "quarantined", "XID 79", 5, "agent", 0}});
  fleet.Undrain("a1", 0, "ada", 10);
  auto out = fleet.OnReport("a1", {Reading(0, 11, 0, false)}, 11);
  EXPECT_TRUE(out.quarantined.empty());
  EXPECT_TRUE(fleet.Offered("a1", 0));
  out = fleet.OnReport("a1", {Reading(0, 12, 0, false, {{79, "hardware"}})}, 12);
  ASSERT_EQ(out.quarantined.size(), 1u);
  EXPECT_FALSE(fleet.Offered("a1", 0));
}

// A stage's gpu_fault (a failed pre-flight) quarantines a GPU in service once; a drained one
// stays drained. QuarantinedOn counts an agent's quarantined GPUs for the node threshold.
TEST(GpuFleetTest, AStageReportedFaultQuarantinesAGpuInService) {
  GpuFleet fleet({.cooldown_ms = 1000, .passes_to_return = 2});
  EXPECT_TRUE(fleet.Quarantine("a1", 1, "GPU-1", "lh-gpucheck: burn: wrong result", 10));
  EXPECT_FALSE(fleet.Quarantine("a1", 1, "GPU-1", "again", 11)) << "already out";
  EXPECT_FALSE(fleet.Offered("a1", 1));
  EXPECT_EQ(fleet.Find("a1", 1)->by, "stage");
  EXPECT_EQ(fleet.Find("a1", 1)->reason, "lh-gpucheck: burn: wrong result");
  EXPECT_EQ(fleet.ChecksDue("a1", 1010), std::vector<int>{1}) << "the return loop applies";
  fleet.Drain("a1", 2, "GPU-2", "drained by bob", "bob", 12);
  EXPECT_FALSE(fleet.Quarantine("a1", 2, "GPU-2", "x", 13));
  EXPECT_EQ(fleet.Find("a1", 2)->health, "drained");
  fleet.OnReport("a1", {Reading(0, 14, 0, false)}, 14);
  EXPECT_EQ(fleet.QuarantinedOn("a1"), 2) << "GPUs 0 and 1; the drained one is not a fault";
  EXPECT_EQ(fleet.QuarantinedOn("a2"), 0);
}

TEST(GpuSeriesTest, AFiveDayAttemptStaysWithinTheBoundAndSummarises) {
  GpuSeries s;
  constexpr int64_t kStep = 5'000;
  constexpr int64_t kFiveDays = int64_t{5} * 24 * 3600 * 1000;
  int64_t n = 0;
  for (int64_t t = kStep; t <= kFiveDays; t += kStep, ++n) {
    // Busy for the first half, idle for the second.
    s.Add(Reading(0, t, t <= kFiveDays / 2 ? 90 : 1), n == 0 ? 0 : kStep);
    ASSERT_LE(s.size(), GpuSeries::kHead + GpuSeries::kTail);
  }
  GpuSummary sum = s.Summarize();
  EXPECT_EQ(sum.sampled_ms, kFiveDays - kStep);
  EXPECT_NEAR(sum.mean_sm_util, 45.5, 0.5);
  EXPECT_NEAR(sum.idle_ms, kFiveDays / 2, 2 * kStep);
  EXPECT_EQ(sum.peak_mem_used, int64_t{1} << 30);
  EXPECT_NEAR(sum.energy_wh, 500.0 * 5 * 24, 1.0);  // 500 W for 120 hours
  // It round-trips through its stored form.
  auto back = GpuSeries::FromJson(s.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->size(), s.size());
  EXPECT_DOUBLE_EQ(back->Summarize().energy_wh, sum.energy_wh);
  EXPECT_FALSE(GpuSeries::FromJson("{\"v\":1,\"head\":[[1,2]],\"tail\":[]}").ok());
  EXPECT_FALSE(GpuSeries::FromJson("not json").ok());
}

TEST(GpuTelemetryTest, WritesAtMostOnceAMinuteAndOnceAtTheEnd) {
  GpuTelemetry t;
  t.Add(7, Reading(0, 1'000, 0));
  t.Add(7, Reading(1, 1'000, 0));
  EXPECT_EQ(t.IdleSince(7), 1'000);
  EXPECT_TRUE(t.TakeDue(30'000).empty());
  EXPECT_EQ(t.TakeDue(61'000).size(), 2u);
  t.Add(7, Reading(0, 62'000, 80));
  EXPECT_EQ(t.IdleSince(7), 0) << "one GPU busy: not idle";
  EXPECT_TRUE(t.TakeDue(90'000).empty());
  auto last = t.Finish(7);
  ASSERT_EQ(last.size(), 1u) << "only the GPU that changed";
  EXPECT_EQ(last[0].gpu_index, 0);
  EXPECT_EQ(t.attempts(), 0u);
}

}  // namespace
}  // namespace longhaul::scheduler
