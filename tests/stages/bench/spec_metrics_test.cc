#include "stages/bench/spec_metrics.h"

#include <gtest/gtest.h>

namespace longhaul::stages {
namespace {

ServerScrape Scrape(const std::string& text, nlohmann::json info = nullptr) {
  ServerScrape s;
  auto snap = PromSnapshot::Parse(text);
  EXPECT_TRUE(snap.ok()) << snap.status();
  s.metrics = std::move(*snap);
  if (!info.is_null()) s.server_info = info;
  return s;
}

std::string Vllm(int drafts, int draft_tokens, int accepted, int p0, int p1, int p2, int gen) {
  return "vllm:spec_decode_num_drafts_total " + std::to_string(drafts) +
         "\nvllm:spec_decode_num_draft_tokens_total " + std::to_string(draft_tokens) +
         "\nvllm:spec_decode_num_accepted_tokens_total " + std::to_string(accepted) +
         "\nvllm:spec_decode_num_accepted_tokens_per_pos_total{position=\"0\"} " +
         std::to_string(p0) +
         "\nvllm:spec_decode_num_accepted_tokens_per_pos_total{position=\"1\"} " +
         std::to_string(p1) +
         "\nvllm:spec_decode_num_accepted_tokens_per_pos_total{position=\"2\"} " +
         std::to_string(p2) + "\nvllm:generation_tokens_total " + std::to_string(gen) + "\n";
}

TEST(SpecMetricsTest, VllmFiguresComeFromCounterDeltas) {
  // Before the run: traffic from someone else that must not count.
  auto before = Scrape(Vllm(50, 150, 60, 40, 15, 5, 500));
  // During the run: 100 drafts of 3 tokens, 150 accepted (80 + 50 + 20 by position).
  auto after = Scrape(Vllm(150, 450, 210, 120, 65, 25, 900));
  SpecMetrics m = ComputeSpecMetrics(before, after, MetricsStyle::kAuto);
  EXPECT_EQ(m.style, "vllm");
  EXPECT_DOUBLE_EQ(*m.acceptance_rate, 150.0 / 300.0);
  EXPECT_DOUBLE_EQ(*m.acceptance_length, 1.0 + 150.0 / 100.0);
  ASSERT_EQ(m.per_position.size(), 3u);
  EXPECT_DOUBLE_EQ(m.per_position[0], 0.80);
  EXPECT_DOUBLE_EQ(m.per_position[1], 0.50);
  EXPECT_DOUBLE_EQ(m.per_position[2], 0.20);
  EXPECT_DOUBLE_EQ(*m.server_generation_tokens, 400);
}

TEST(SpecMetricsTest, NoDraftsMeansNoFigures) {
  auto s = Scrape(Vllm(5, 15, 6, 4, 1, 1, 10));
  SpecMetrics m = ComputeSpecMetrics(s, s, MetricsStyle::kVllm);
  EXPECT_FALSE(m.acceptance_rate.has_value());
  EXPECT_FALSE(m.acceptance_length.has_value());
  EXPECT_NE(m.note.find("no drafts"), std::string::npos);
}

TEST(SpecMetricsTest, SglangReadsLatestGaugesAndServerInfo) {
  auto before = Scrape("sglang:spec_accept_length 1.5\nsglang:spec_accept_rate 0.2\n");
  nlohmann::json info = {{"internal_states", {{{"avg_spec_accept_length", 2.75}}}}};
  auto after = Scrape("sglang:spec_accept_length 3.1\nsglang:spec_accept_rate 0.7\n", info);
  SpecMetrics m = ComputeSpecMetrics(before, after, MetricsStyle::kAuto);
  EXPECT_EQ(m.style, "sglang");
  EXPECT_DOUBLE_EQ(*m.acceptance_length, 3.1);  // the latest value, not a delta
  EXPECT_DOUBLE_EQ(*m.acceptance_rate, 0.7);
  EXPECT_DOUBLE_EQ(*m.sglang_avg_spec_accept_length, 2.75);
  auto j = SpecMetricsToJson(m);
  EXPECT_EQ(j["avg_spec_accept_length"], 2.75);
}

TEST(SpecMetricsTest, MissingMetricsAreSaidNotInvented) {
  ServerScrape none;
  none.error = "GET /metrics: HTTP 404";
  SpecMetrics m = ComputeSpecMetrics(none, none, MetricsStyle::kAuto);
  EXPECT_EQ(m.style, "none");
  EXPECT_NE(m.note.find("HTTP 404"), std::string::npos);
  auto plain = Scrape("process_cpu_seconds_total 3\n");
  m = ComputeSpecMetrics(plain, plain, MetricsStyle::kAuto);
  EXPECT_EQ(m.style, "none");
  // A server info without acceptance figures (no drafter loaded) is not SGLang speculation.
  auto info =
      Scrape("sglang:gen_throughput 5\n", {{"internal_states", {{{"last_gen_throughput", 5.0}}}}});
  m = ComputeSpecMetrics(info, info, MetricsStyle::kAuto);
  EXPECT_EQ(m.style, "none");
  EXPECT_NE(m.note.find("no speculative-decoding metrics"), std::string::npos);
  EXPECT_FALSE(m.acceptance_rate.has_value());
  EXPECT_FALSE(ParseMetricsStyle("vlm").ok());
}

}  // namespace
}  // namespace longhaul::stages
