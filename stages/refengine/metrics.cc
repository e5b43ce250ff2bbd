#include "stages/refengine/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/metrics.h"
#include "core/strings.h"

namespace longhaul::refengine {
namespace {

std::string Num(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

void Header(std::string* out, const std::string& name, const char* type, const char* help) {
  *out += StrCat("# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

void Sample(std::string* out, const std::string& name, const std::string& labels, double v) {
  *out += StrCat(name, "{", labels, "} ", Num(v), "\n");
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++buckets_[i];
  sum_ += value;
  ++count_;
}

void Histogram::Render(const std::string& name, const std::string& labels, std::string* out) const {
  int64_t cumulative = 0;
  std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += buckets_[i];
    std::string le = i < bounds_.size() ? Num(bounds_[i]) : "+Inf";
    *out += StrCat(name, "_bucket{", labels, sep, "le=\"", le, "\"} ", cumulative, "\n");
  }
  *out += StrCat(name, "_sum{", labels, "} ", Num(sum_), "\n");
  *out += StrCat(name, "_count{", labels, "} ", count_, "\n");
}

// vLLM's bucket bounds for these histograms.
ServerMetrics::ServerMetrics()
    : ttft({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
            1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}),
      e2e({0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
           30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}),
      inter_token({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
                   7.5, 10.0, 20.0, 40.0, 80.0}) {}

std::string RenderPrometheus(const MetricsView& v) {
  const EngineStats& s = *v.stats;
  const std::string model =
      StrCat("model_name=\"", metrics::EscapePrometheusLabelValue(v.model_name), "\"");
  std::string out;
  if (v.style != MetricsStyle::kSglang) {
    Header(&out, "vllm:num_requests_running", "gauge",
           "Number of requests in model execution batches.");
    Sample(&out, "vllm:num_requests_running", model, v.num_running);
    Header(&out, "vllm:num_requests_waiting", "gauge",
           "Number of requests waiting to be processed.");
    Sample(&out, "vllm:num_requests_waiting", model, v.num_waiting);
    Header(&out, "vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.");
    Sample(&out, "vllm:prompt_tokens_total", model, s.prompt_tokens);
    Header(&out, "vllm:generation_tokens_total", "counter",
           "Number of generation tokens processed.");
    Sample(&out, "vllm:generation_tokens_total", model, s.generation_tokens);
    Header(&out, "vllm:request_success_total", "counter",
           "Count of successfully processed requests.");
    Sample(&out, "vllm:request_success_total", model, v.server->requests_success);
    Header(&out, "vllm:time_to_first_token_seconds", "histogram",
           "Histogram of time to first token in seconds.");
    v.server->ttft.Render("vllm:time_to_first_token_seconds", model, &out);
    Header(&out, "vllm:e2e_request_latency_seconds", "histogram",
           "Histogram of e2e request latency in seconds.");
    v.server->e2e.Render("vllm:e2e_request_latency_seconds", model, &out);
    Header(&out, "vllm:inter_token_latency_seconds", "histogram",
           "Histogram of inter-token latency in seconds.");
    v.server->inter_token.Render("vllm:inter_token_latency_seconds", model, &out);
    if (v.num_speculative_tokens > 0) {
      Header(&out, "vllm:spec_decode_num_drafts_total", "counter",
             "Number of spec decoding drafts.");
      Sample(&out, "vllm:spec_decode_num_drafts_total", model, s.spec.drafts);
      Header(&out, "vllm:spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.");
      Sample(&out, "vllm:spec_decode_num_draft_tokens_total", model, s.spec.draft_tokens);
      Header(&out, "vllm:spec_decode_num_accepted_tokens_total", "counter",
             "Number of accepted tokens.");
      Sample(&out, "vllm:spec_decode_num_accepted_tokens_total", model, s.spec.accepted);
      Header(&out, "vllm:spec_decode_num_accepted_tokens_per_pos_total", "counter",
             "Accepted tokens per draft position.");
      for (int i = 0; i < v.num_speculative_tokens; ++i) {
        int64_t n =
            i < static_cast<int>(s.spec.accepted_per_pos.size()) ? s.spec.accepted_per_pos[i] : 0;
        Sample(&out, "vllm:spec_decode_num_accepted_tokens_per_pos_total",
               StrCat(model, ",position=\"", i, "\""), n);
      }
    }
  }
  if (v.style != MetricsStyle::kVllm) {
    Header(&out, "sglang:num_running_reqs", "gauge", "The number of running requests.");
    Sample(&out, "sglang:num_running_reqs", model, v.num_running);
    Header(&out, "sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.");
    Sample(&out, "sglang:num_queue_reqs", model, v.num_waiting);
    Header(&out, "sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.");
    Sample(&out, "sglang:prompt_tokens_total", model, s.prompt_tokens);
    Header(&out, "sglang:generation_tokens_total", "counter",
           "Number of generation tokens processed.");
    Sample(&out, "sglang:generation_tokens_total", model, s.generation_tokens);
    Header(&out, "sglang:gen_throughput", "gauge", "The generation throughput (token/s).");
    Sample(&out, "sglang:gen_throughput", model, v.server->last_gen_throughput);
    Header(&out, "sglang:time_to_first_token_seconds", "histogram",
           "Histogram of time to first token in seconds.");
    v.server->ttft.Render("sglang:time_to_first_token_seconds", model, &out);
    Header(&out, "sglang:e2e_request_latency_seconds", "histogram",
           "Histogram of End-to-end request latency in seconds");
    v.server->e2e.Render("sglang:e2e_request_latency_seconds", model, &out);
    if (v.num_speculative_tokens > 0) {
      // Gauges of the latest batch that ran a speculative round, as SGLang reports them.
      double rounds = static_cast<double>(s.last_batch_rounds);
      double length = rounds > 0 ? 1.0 + s.last_batch_accepted / rounds : 0.0;
      double rate = s.last_batch_drafted > 0
                        ? static_cast<double>(s.last_batch_accepted) / s.last_batch_drafted
                        : 0.0;
      Header(&out, "sglang:spec_accept_length", "gauge",
             "The average acceptance length of speculative decoding.");
      Sample(&out, "sglang:spec_accept_length", model, length);
      Header(&out, "sglang:spec_accept_rate", "gauge",
             "The average acceptance rate of speculative decoding.");
      Sample(&out, "sglang:spec_accept_rate", model, rate);
    }
  }
  return out;
}

nlohmann::json ServerInfo(const MetricsView& v) {
  const EngineStats& s = *v.stats;
  nlohmann::json state = {{"last_gen_throughput", v.server->last_gen_throughput}};
  if (v.num_speculative_tokens > 0) {
    state["avg_spec_accept_length"] = s.spec.MeanAcceptanceLength();
  }
  return {
      {"model_path", v.model_name},
      {"served_model_name", v.model_name},
      {"version", "longhaul-refengine"},
      {"speculative_algorithm",
       v.num_speculative_tokens > 0 ? nlohmann::json("EAGLE3") : nlohmann::json(nullptr)},
      {"speculative_num_draft_tokens", v.num_speculative_tokens + (v.num_speculative_tokens > 0)},
      {"internal_states", nlohmann::json::array({state})}};
}

}  // namespace longhaul::refengine
