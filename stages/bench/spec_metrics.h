// Speculative-decoding figures from the server's own counters, scraped before and after a
// run (docs/engines.md):
//   vLLM (counters, deltas): acceptance rate = d_accepted / d_draft_tokens;
//     mean acceptance length = 1 + d_accepted / d_drafts (the bonus token counted);
//     per position i = d_accepted_per_pos[i] / d_drafts.
//   SGLang (gauges of the latest batch, read after the run): sglang:spec_accept_length,
//     sglang:spec_accept_rate; and /get_server_info's internal_states[0].
//     avg_spec_accept_length (cumulative since the server started).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "stages/common/endpoint.h"
#include "stages/common/prometheus.h"

namespace longhaul::stages {

enum class MetricsStyle { kAuto, kVllm, kSglang, kNone };

Result<MetricsStyle> ParseMetricsStyle(std::string_view name);  // auto|vllm|sglang|none
std::string_view MetricsStyleName(MetricsStyle style);

struct ServerScrape {
  std::optional<PromSnapshot> metrics;        // nullopt when /metrics could not be read
  std::optional<nlohmann::json> server_info;  // SGLang's /get_server_info, when it answers
  std::string error;                          // why metrics is missing
};

// GET /metrics and (unless the style is vllm or none) /get_server_info, 10 s timeout each.
// Never fails: what could not be read is left empty and said in `error`.
ServerScrape ScrapeServer(const net::HttpUrl& url, MetricsStyle style);

struct SpecMetrics {
  std::string style = "none";  // the style used: "vllm", "sglang" or "none"
  std::string note;            // why nothing was computed, or a caveat
  std::optional<double> acceptance_rate;
  std::optional<double> acceptance_length;
  std::vector<double> per_position;  // vLLM only
  // vLLM counter deltas
  double drafts = 0, draft_tokens = 0, accepted_tokens = 0;
  // SGLang
  std::optional<double> sglang_accept_length_gauge;
  std::optional<double> sglang_accept_rate_gauge;
  std::optional<double> sglang_avg_spec_accept_length;
  // Generated tokens the server counted during the run (either engine), to cross-check the
  // client's own count.
  std::optional<double> server_generation_tokens;
};

SpecMetrics ComputeSpecMetrics(const ServerScrape& before, const ServerScrape& after,
                               MetricsStyle style);

nlohmann::json SpecMetricsToJson(const SpecMetrics& m);

}  // namespace longhaul::stages
