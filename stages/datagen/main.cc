// lh-datagen: regenerates the assistant answers of a conversations / ShareGPT file with an
// OpenAI-compatible endpoint, resumably. See docs/stages.md ("lh-datagen").
#include <CLI/CLI.hpp>
#include <cstdio>

#include "core/event_writer.h"
#include "core/logging.h"
#include "core/strings.h"
#include "stages/datagen/datagen_app.h"

int main(int argc, char** argv) {
  using namespace longhaul;
  using namespace longhaul::stages;
  DatagenOptions o;
  std::string log_level = "info";
  double temperature = 0, top_p = 1;
  int64_t max_tokens = 0, seed = 0;
  bool no_stream = false;

  CLI::App app{"lh-datagen: regenerate conversations' answers with the target model"};
  app.add_option("--endpoint", o.endpoint, "server URL, http://HOST:PORT")->required();
  app.add_option("--model", o.model, "model name sent in requests")->required();
  app.add_option("--prompts", o.prompts_file, "conversations JSONL or ShareGPT (JSONL or array)")
      ->required();
  app.add_option("--out", o.out_file, "output conversations JSONL (appended; resumable)")
      ->required();
  app.add_option("--samples", o.samples, "generate the first N distinct prompts")->required();
  app.add_option("--failed-out", o.failed_file, "failed samples (default OUT.failed.jsonl)");
  app.add_option("--concurrency", o.concurrency, "samples in flight (default 8)");
  auto* temp_opt = app.add_option("--temperature", temperature, "sampling temperature");
  auto* top_p_opt = app.add_option("--top-p", top_p, "nucleus sampling");
  auto* max_opt = app.add_option("--max-tokens", max_tokens, "max_tokens per answer");
  auto* seed_opt = app.add_option("--seed", seed, "request seed = SEED + sample index");
  app.add_flag("--no-stream", no_stream, "ask for whole responses instead of streams");
  app.add_option("--request-timeout", o.request_timeout_s, "seconds per request (default 600)");
  app.add_option("--max-request-retries", o.max_request_retries,
                 "retries per request on 429/5xx/timeouts/connection errors (default 5)");
  app.add_option("--retry-initial-backoff", o.retry_initial_backoff_s, "seconds (default 1)");
  app.add_option("--retry-max-backoff", o.retry_max_backoff_s, "seconds (default 60)");
  app.add_option("--max-failed-fraction", o.max_failed_fraction,
                 "exit non-zero when more samples fail (default 0.01)");
  app.add_option("--log-level", log_level, "debug | info | warn | error");
  CLI11_PARSE(app, argc, argv);

  SetupLogging(log_level);
  if (temp_opt->count()) o.temperature = temperature;
  if (top_p_opt->count()) o.top_p = top_p;
  if (max_opt->count()) o.max_tokens = max_tokens;
  if (seed_opt->count()) o.seed = seed;
  o.stream = !no_stream;

  EventWriter events = EventWriter::FromEnv();
  auto outcome = RunDatagen(o, events);
  if (!outcome.ok()) {
    std::string msg = ToStd(outcome.status().message());
    events.Message("error", msg);
    std::fprintf(stderr, "lh-datagen: %s\n", msg.c_str());
    return outcome.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  if (outcome->interrupted) return 143;
  if (outcome->too_many_failures) {
    std::fprintf(stderr, "lh-datagen: %lld of %lld samples failed (see %s)\n",
                 static_cast<long long>(outcome->stats.failed),
                 static_cast<long long>(outcome->total), o.failed_file.c_str());
    return 1;
  }
  return 0;
}
