#include "stages/common/prometheus.h"

#include <gtest/gtest.h>

#include <cmath>

namespace longhaul::stages {
namespace {

constexpr char kVllm[] = R"(# HELP vllm:spec_decode_num_drafts Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 100.0
vllm:spec_decode_num_drafts_total{engine="1",model_name="m"} 20.0
vllm:spec_decode_num_drafts_created{engine="0",model_name="m"} 1.7e+09
# TYPE vllm:spec_decode_num_accepted_tokens_per_pos counter
vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name="m",position="0"} 80.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name="m",position="1"} 50.0
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 3
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="m"} 2.0
vllm:time_to_first_token_seconds_bucket{le="0.5",model_name="m"} 6.0
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 10.0
vllm:time_to_first_token_seconds_sum{model_name="m"} 3.5
vllm:time_to_first_token_seconds_count{model_name="m"} 10.0
weird{path="a\"b\\c\nd"} NaN 1700000000000
)";

void Replace(std::string& s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
}

TEST(PrometheusTest, ParsesCountersGaugesAndTypes) {
  auto snap = PromSnapshot::Parse(kVllm);
  ASSERT_TRUE(snap.ok()) << snap.status();
  EXPECT_EQ(snap->TypeOf("vllm:spec_decode_num_drafts"), "counter");
  EXPECT_EQ(snap->TypeOf("vllm:num_requests_running"), "gauge");
  EXPECT_EQ(snap->Counter("vllm:spec_decode_num_drafts"), 120.0);  // summed over engines
  EXPECT_EQ(snap->Counter("vllm:spec_decode_num_drafts", {{"engine", "1"}}), 20.0);
  EXPECT_EQ(snap->Sum("vllm:num_requests_running"), 3.0);
  EXPECT_FALSE(snap->Counter("vllm:nothing").has_value());
  auto pos = snap->ByLabel("vllm:spec_decode_num_accepted_tokens_per_pos", "position");
  ASSERT_EQ(pos.size(), 2u);
  EXPECT_EQ(pos["1"], 50.0);
}

TEST(PrometheusTest, LabelEscapesNanAndTimestamps) {
  auto snap = PromSnapshot::Parse(kVllm);
  ASSERT_TRUE(snap.ok());
  const PromSample* weird = nullptr;
  for (const auto& s : snap->samples()) {
    if (s.name == "weird") weird = &s;
  }
  ASSERT_NE(weird, nullptr);
  EXPECT_EQ(weird->labels[0].second, "a\"b\\c\nd");
  EXPECT_TRUE(std::isnan(weird->value));
}

TEST(PrometheusTest, HistogramDeltaAndQuantile) {
  auto before = PromSnapshot::Parse(kVllm);
  std::string later = kVllm;
  // Ten more observations, all in (0.1, 0.5].
  Replace(later, "{le=\"0.5\",model_name=\"m\"} 6.0", "{le=\"0.5\",model_name=\"m\"} 16.0");
  Replace(later, "{le=\"+Inf\",model_name=\"m\"} 10.0", "{le=\"+Inf\",model_name=\"m\"} 20.0");
  Replace(later, "_count{model_name=\"m\"} 10.0", "_count{model_name=\"m\"} 20.0");
  auto after = PromSnapshot::Parse(later);
  ASSERT_TRUE(after.ok()) << after.status();
  auto hb = before->Histogram("vllm:time_to_first_token_seconds");
  auto ha = after->Histogram("vllm:time_to_first_token_seconds");
  ASSERT_TRUE(hb && ha);
  EXPECT_EQ(hb->count, 10.0);
  EXPECT_DOUBLE_EQ(*HistogramQuantile(*hb, 0.5), 0.1 + 0.4 * (5.0 - 2.0) / 4.0);
  PromHistogram d = HistogramDelta(*hb, *ha);
  EXPECT_EQ(d.count, 10.0);
  EXPECT_EQ(d.buckets[0].second, 0.0);
  EXPECT_EQ(d.buckets[1].second, 10.0);
  EXPECT_DOUBLE_EQ(*HistogramQuantile(d, 0.5), 0.3);
}

TEST(PrometheusTest, CounterResetCountsFromZero) {
  EXPECT_EQ(CounterDelta(100, 130), 30);
  EXPECT_EQ(CounterDelta(100, 7), 7);  // server restarted
}

TEST(PrometheusTest, ErrorsNameTheLine) {
  auto s = PromSnapshot::Parse("ok 1\nbad{a=\"x\" \n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("metrics line 2"), std::string::npos) << s.status();
  EXPECT_FALSE(PromSnapshot::Parse("x abc\n").ok());
  EXPECT_FALSE(PromSnapshot::Parse("x 1 2 3\n").ok());
  EXPECT_TRUE(PromSnapshot::Parse("\n# just a comment\n").ok());
}

}  // namespace
}  // namespace longhaul::stages
