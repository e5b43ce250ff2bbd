// lh-bench's configuration, as its flags give it (stages/bench/main.cc) and as the result
// file records it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/status.h"
#include "stages/bench/spec_metrics.h"
#include "stages/common/openai.h"

namespace longhaul::stages {

struct BenchOptions {
  std::string endpoint;
  std::string model;
  OpenAiApi api = OpenAiApi::kChat;
  // Load: a schedule at `rate` requests/s (uniform, or Poisson), and/or a cap of
  // `concurrency` requests in flight. Concurrency alone is closed loop.
  std::optional<double> rate;
  bool poisson = false;
  std::optional<int64_t> concurrency;
  // Length: a number of requests, or a duration in seconds.
  std::optional<int64_t> num_requests;
  std::optional<double> duration_s;
  // Prompts: a conversations/ShareGPT file, or random word prompts.
  std::string prompts_file;
  std::optional<int64_t> random_input_len;
  std::optional<int64_t> random_output_len;
  std::optional<int64_t> max_tokens;
  std::optional<double> temperature;
  int64_t seed = 0;
  double request_timeout_s = 600;
  std::string baseline_file;
  std::string out_file = "bench_result.json";
  MetricsStyle metrics_style = MetricsStyle::kAuto;
  double max_failed_fraction = 0.01;
  bool keep_records = true;  // raw per-request records in the result file
};

// Checks combinations the flag parser cannot: InvalidArgument names the flags.
Status ValidateBenchOptions(const BenchOptions& o);

nlohmann::json BenchOptionsToJson(const BenchOptions& o);

}  // namespace longhaul::stages
