// The refengine's /metrics text (Prometheus exposition format) and /get_server_info JSON,
// under vLLM's metric names and meanings (docs/engines.md) and, optionally, SGLang's.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stages/refengine/engine.h"

namespace longhaul::refengine {

// A cumulative Prometheus histogram with fixed upper bounds (seconds). Not thread-safe.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // Lines NAME_bucket{LABELS,le="..."}, NAME_sum{LABELS}, NAME_count{LABELS}.
  void Render(const std::string& name, const std::string& labels, std::string* out) const;
  int64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> buckets_;  // non-cumulative; rendered cumulative
  double sum_ = 0;
  int64_t count_ = 0;
};

enum class MetricsStyle { kVllm, kSglang, kBoth };

struct ServerMetrics {
  ServerMetrics();
  Histogram ttft;         // request arrival -> first token delivered
  Histogram e2e;          // request arrival -> last token delivered
  Histogram inter_token;  // gap between deliveries / tokens in the later delivery
  int64_t requests_success = 0;
  // Generation throughput over the last few seconds (SGLang's last_gen_throughput).
  double last_gen_throughput = 0;
};

struct MetricsView {
  const EngineStats* stats = nullptr;
  const ServerMetrics* server = nullptr;
  std::string model_name;
  int num_running = 0;
  int num_waiting = 0;
  int num_speculative_tokens = 0;  // 0 without a drafter
  MetricsStyle style = MetricsStyle::kVllm;
};

std::string RenderPrometheus(const MetricsView& view);
// SGLang's /get_server_info: internal_states[0].avg_spec_accept_length is cumulative since
// start, 1 + accepted / rounds (the bonus token counted), as SGLang reports it.
nlohmann::json ServerInfo(const MetricsView& view);

}  // namespace longhaul::refengine
