#include "stages/bench/bench_options.h"

#include "core/strings.h"
#include "stages/common/endpoint.h"

namespace longhaul::stages {

Status ValidateBenchOptions(const BenchOptions& o) {
  auto bad = [](std::string_view why) { return absl::InvalidArgumentError(std::string(why)); };
  RETURN_IF_ERROR(ParseEndpoint(o.endpoint).status());
  if (o.model.empty()) return bad("--model is required");
  if (!o.rate && !o.concurrency) return bad("give --rate R or --concurrency C");
  if (o.rate && !(*o.rate > 0)) return bad("--rate must be > 0");
  if (o.poisson && !o.rate) return bad("--poisson needs --rate");
  if (o.concurrency && *o.concurrency < 1) return bad("--concurrency must be >= 1");
  if (o.num_requests.has_value() == o.duration_s.has_value()) {
    return bad("give exactly one of --num-requests N and --duration S");
  }
  if (o.num_requests && *o.num_requests < 1) return bad("--num-requests must be >= 1");
  if (o.duration_s && !(*o.duration_s > 0)) return bad("--duration must be > 0");
  bool random = o.random_input_len.has_value() || o.random_output_len.has_value();
  if (o.prompts_file.empty() == !random) {
    return bad("give --prompts FILE, or --random-input-len L and --random-output-len L");
  }
  if (random && !(o.random_input_len && o.random_output_len)) {
    return bad("--random-input-len and --random-output-len go together");
  }
  if (o.random_input_len && *o.random_input_len < 1) return bad("--random-input-len must be >= 1");
  if (o.random_output_len && *o.random_output_len < 1) {
    return bad("--random-output-len must be >= 1");
  }
  if (o.max_tokens && *o.max_tokens < 1) return bad("--max-tokens must be >= 1");
  if (!(o.request_timeout_s > 0)) return bad("--request-timeout must be > 0");
  if (o.max_failed_fraction < 0 || o.max_failed_fraction > 1) {
    return bad("--max-failed-fraction must be in [0, 1]");
  }
  if (o.out_file.empty()) return bad("--out must not be empty");
  return OkStatus();
}

nlohmann::json BenchOptionsToJson(const BenchOptions& o) {
  nlohmann::json j = {{"endpoint", o.endpoint},
                      {"model", o.model},
                      {"api", OpenAiApiName(o.api)},
                      {"poisson", o.poisson},
                      {"seed", o.seed},
                      {"request_timeout_s", o.request_timeout_s},
                      {"metrics_style", MetricsStyleName(o.metrics_style)}};
  auto opt = [&](const char* k, const auto& v) {
    j[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  opt("rate", o.rate);
  opt("concurrency", o.concurrency);
  opt("num_requests", o.num_requests);
  opt("duration_s", o.duration_s);
  opt("random_input_len", o.random_input_len);
  opt("random_output_len", o.random_output_len);
  opt("max_tokens", o.max_tokens);
  opt("temperature", o.temperature);
  j["prompts"] = o.prompts_file.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.prompts_file);
  j["baseline"] =
      o.baseline_file.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.baseline_file);
  return j;
}

}  // namespace longhaul::stages
