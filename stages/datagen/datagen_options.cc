#include "stages/datagen/datagen_options.h"

#include "core/strings.h"
#include "stages/common/endpoint.h"

namespace longhaul::stages {

Status ValidateDatagenOptions(DatagenOptions& o) {
  auto bad = [](std::string_view why) { return absl::InvalidArgumentError(std::string(why)); };
  RETURN_IF_ERROR(ParseEndpoint(o.endpoint).status());
  if (o.model.empty()) return bad("--model is required");
  if (o.prompts_file.empty()) return bad("--prompts is required");
  if (o.out_file.empty()) return bad("--out is required");
  if (o.samples < 1) return bad("--samples must be >= 1");
  if (o.concurrency < 1) return bad("--concurrency must be >= 1");
  if (o.max_tokens && *o.max_tokens < 1) return bad("--max-tokens must be >= 1");
  if (!(o.request_timeout_s > 0)) return bad("--request-timeout must be > 0");
  if (o.max_request_retries < 0) return bad("--max-request-retries must be >= 0");
  if (!(o.retry_initial_backoff_s >= 0) || o.retry_max_backoff_s < o.retry_initial_backoff_s) {
    return bad("--retry-initial-backoff must be >= 0 and <= --retry-max-backoff");
  }
  if (o.max_failed_fraction < 0 || o.max_failed_fraction > 1) {
    return bad("--max-failed-fraction must be in [0, 1]");
  }
  if (o.failed_file.empty()) {
    std::string base = o.out_file;
    if (EndsWith(base, ".jsonl")) base.resize(base.size() - 6);
    o.failed_file = base + ".failed.jsonl";
  }
  if (o.failed_file == o.out_file) return bad("--failed-out must differ from --out");
  return OkStatus();
}

}  // namespace longhaul::stages
