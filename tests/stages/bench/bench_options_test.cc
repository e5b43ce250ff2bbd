#include "stages/bench/bench_options.h"

#include <gtest/gtest.h>

namespace longhaul::stages {
namespace {

BenchOptions Good() {
  BenchOptions o;
  o.endpoint = "http://127.0.0.1:8000";
  o.model = "m";
  o.rate = 10;
  o.num_requests = 5;
  o.random_input_len = 8;
  o.random_output_len = 8;
  return o;
}

std::string Error(const BenchOptions& o) { return std::string(ValidateBenchOptions(o).message()); }

TEST(BenchOptionsTest, AcceptsAGoodSet) { EXPECT_TRUE(ValidateBenchOptions(Good()).ok()); }

TEST(BenchOptionsTest, NamesTheFlagsThatConflict) {
  auto o = Good();
  o.rate.reset();
  EXPECT_NE(Error(o).find("--rate R or --concurrency C"), std::string::npos);
  o = Good();
  o.duration_s = 3;
  EXPECT_NE(Error(o).find("exactly one of --num-requests N and --duration S"), std::string::npos);
  o = Good();
  o.prompts_file = "p.jsonl";
  EXPECT_NE(Error(o).find("--prompts FILE, or --random-input-len"), std::string::npos);
  o = Good();
  o.random_output_len.reset();
  EXPECT_NE(Error(o).find("go together"), std::string::npos);
  o = Good();
  o.rate.reset();
  o.concurrency = 2;
  o.poisson = true;
  EXPECT_NE(Error(o).find("--poisson needs --rate"), std::string::npos);
  o = Good();
  o.endpoint = "https://x";
  EXPECT_NE(Error(o).find("https is not supported"), std::string::npos);
}

}  // namespace
}  // namespace longhaul::stages
