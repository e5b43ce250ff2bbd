#include "stages/bench/bench_result.h"

#include <gtest/gtest.h>

namespace longhaul::stages {
namespace {

using nlohmann::json;

constexpr int64_t kMs = 1'000'000;

BenchOptions Options() {
  BenchOptions o;
  o.endpoint = "http://127.0.0.1:1";
  o.model = "m";
  o.rate = 10;
  o.num_requests = 2;
  return o;
}

// A request planned at `planned` ms, sent 1 ms late, first chunk 20 ms after planned, then
// chunks every 10 ms carrying `per_chunk` tokens each (known from a running usage).
RequestRecord Streamed(int64_t index, int64_t planned, int chunks, int per_chunk) {
  RequestRecord r;
  r.index = index;
  r.planned_ns = planned * kMs;
  r.dispatch_ns = r.planned_ns + 1 * kMs;
  r.sent_ns = r.dispatch_ns;
  r.first_token_ns = r.planned_ns + 20 * kMs;
  for (int k = 0; k < chunks; ++k) {
    r.chunk_ns.push_back(r.first_token_ns + k * 10 * kMs);
    r.chunk_tokens.push_back(per_chunk);
  }
  r.end_ns = r.chunk_ns.back() + 5 * kMs;
  r.http_status = 200;
  r.ok = true;
  r.output_tokens = chunks * per_chunk;
  r.prompt_tokens = 7;
  r.tokens_from_usage = true;
  r.per_chunk_tokens_known = true;
  return r;
}

TEST(BenchResultTest, LatencyDefinitions) {
  std::vector<RequestRecord> recs = {Streamed(0, 0, 4, 3), Streamed(1, 100, 4, 3)};
  RunFacts facts;
  facts.planned_ns = {0, 100 * kMs};
  json r = BuildBenchResult(Options(), recs, facts, SpecMetrics{}, nullptr);
  const json& lat = r["latency_ms"];
  EXPECT_DOUBLE_EQ(lat["ttft"]["p50"].get<double>(), 20.0);
  // e2e = 20 + 30 + 5 = 55 ms from the planned time.
  EXPECT_DOUBLE_EQ(lat["e2e"]["mean"].get<double>(), 55.0);
  // TPOT = (55 - 20) / (12 - 1)
  EXPECT_DOUBLE_EQ(lat["tpot"]["mean"].get<double>(), 35.0 / 11.0);
  // Chunks 10 ms apart; each carried 3 tokens: 3.33 ms per token.
  EXPECT_DOUBLE_EQ(lat["itl_per_chunk"]["p50"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(lat["itl_per_token"]["p50"].get<double>(), 10.0 / 3.0);
  EXPECT_EQ(r["itl_per_token_source"], "usage_per_chunk");
  EXPECT_DOUBLE_EQ(r["schedule_error_ms"]["p99"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r["rate"]["planned"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(r["rate"]["achieved"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(r["rate"]["achieved_vs_planned"].get<double>(), 1.0);
  // 24 tokens over the 155 ms from the first planned send to the last byte.
  EXPECT_DOUBLE_EQ(r["throughput"]["output_tokens_per_s"].get<double>(), 24 / 0.155);
  EXPECT_EQ(r["records"].size(), 2u);
  EXPECT_EQ(r["records"][1]["chunk_tokens"][0], 3);
}

TEST(BenchResultTest, EvenSplitWithoutPerChunkUsageAndFailuresCounted) {
  RequestRecord a = Streamed(0, 0, 4, 3);
  a.per_chunk_tokens_known = false;
  a.chunk_tokens.clear();
  RequestRecord b = Streamed(1, 100, 2, 1);
  b.ok = false;
  b.error = "HTTP 500: boom";
  RunFacts facts;
  facts.planned_ns = {0, 100 * kMs};
  json r = BuildBenchResult(Options(), {a, b}, facts, SpecMetrics{}, nullptr);
  EXPECT_EQ(r["itl_per_token_source"], "even_split_of_usage");
  EXPECT_DOUBLE_EQ(r["latency_ms"]["itl_per_token"]["p50"].get<double>(), 10.0 / 3.0);
  EXPECT_EQ(r["requests"]["completed"], 1);
  EXPECT_EQ(r["requests"]["failed"], 1);
  EXPECT_EQ(r["errors"]["HTTP 500: boom"], 1);
  EXPECT_EQ(r["latency_ms"]["e2e"]["count"], 1);
}

TEST(BenchResultTest, BaselineSpeedupsAndFigures) {
  RunFacts facts;
  facts.planned_ns = {0, 100 * kMs};
  json base = BuildBenchResult(Options(), {Streamed(0, 0, 12, 1), Streamed(1, 100, 12, 1)}, facts,
                               SpecMetrics{}, nullptr);
  SpecMetrics spec;
  spec.style = "vllm";
  spec.acceptance_rate = 0.5;
  spec.acceptance_length = 2.5;
  spec.per_position = {0.8, 0.5, 0.2};
  json ours = BuildBenchResult(Options(), {Streamed(0, 0, 4, 3), Streamed(1, 100, 4, 3)}, facts,
                               spec, &base);
  double base_tpot = base["latency_ms"]["tpot"]["mean"];
  double our_tpot = ours["latency_ms"]["tpot"]["mean"];
  EXPECT_DOUBLE_EQ(ours["baseline"]["speedup_tpot"].get<double>(), base_tpot / our_tpot);
  EXPECT_GT(ours["baseline"]["speedup_output_throughput"].get<double>(), 1.0);
  std::map<std::string, double> figs;
  for (const auto& [k, v] : ResultFigures(ours)) figs[k] = v;
  EXPECT_EQ(figs.at("accept_rate"), 0.5);
  EXPECT_EQ(figs.at("accept_rate_pos_2"), 0.2);
  EXPECT_EQ(figs.at("ttft_ms_p50"), 20.0);
  EXPECT_TRUE(figs.count("speedup_output_throughput"));
  EXPECT_TRUE(figs.count("schedule_error_ms_p99"));
  EXPECT_EQ(figs.count("queue_ms_bogus"), 0u);
}

}  // namespace
}  // namespace longhaul::stages
