// lh-bench's result: every figure computed from the per-request records, the server's
// speculative-decoding metrics, and the comparison with a baseline result.
//
// Definitions (vLLM's `bench serve` and SGLang's `bench_serving`, docs/engines.md):
//   TTFT   planned send -> first chunk with content (or reasoning) text
//   e2e    planned send -> last byte
//   TPOT   (e2e - TTFT) / (output_tokens - 1), for requests with >= 2 output tokens
//   ITL    per chunk: gap between successive content chunks;
//          per token: each gap divided among the tokens its chunk carried (exact when the
//          server reports a running usage per chunk, else an even split of the usage total
//          over the chunks after the first, and one token per chunk without any usage)
// Latency figures are in ms over successful requests; throughputs over the span from the
// first planned send to the last response.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stages/bench/bench_options.h"
#include "stages/bench/load_runner.h"
#include "stages/bench/spec_metrics.h"

namespace longhaul::stages {

struct RunFacts {
  std::vector<int64_t> planned_ns;  // the open-loop schedule (empty for closed loop)
  int64_t start_epoch_ms = 0;
  bool interrupted = false;
  int64_t connections_opened = 0;
  std::string workload;
};

nlohmann::json BuildBenchResult(const BenchOptions& options,
                                const std::vector<RequestRecord>& records, const RunFacts& facts,
                                const SpecMetrics& spec, const nlohmann::json* baseline);

// Reads a baseline result file written by lh-bench; an error names the file and the field.
Result<nlohmann::json> LoadBaseline(const std::string& path);

// Every figure of a result as (name, value), for metric events: "ttft_ms_p50",
// "output_throughput", "accept_rate", "speedup_output_throughput", ... Null figures are
// left out.
std::vector<std::pair<std::string, double>> ResultFigures(const nlohmann::json& result);

}  // namespace longhaul::stages
