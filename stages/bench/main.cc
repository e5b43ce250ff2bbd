// lh-bench: open-loop load generator and speculative-decoding benchmark for
// OpenAI-compatible servers. See docs/stages.md ("lh-bench").
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "core/event_writer.h"
#include "core/logging.h"
#include "core/strings.h"
#include "stages/bench/bench_app.h"

int main(int argc, char** argv) {
  using namespace longhaul;
  using namespace longhaul::stages;
  BenchOptions o;
  std::string api = "chat", style = "auto", log_level = "info";
  double rate = 0, duration = 0;
  int64_t concurrency = 0, num_requests = 0, in_len = 0, out_len = 0, max_tokens = 0;
  double temperature = 0;
  bool no_records = false;

  CLI::App app{"lh-bench: open-loop load generator for OpenAI-compatible servers"};
  app.add_option("--endpoint", o.endpoint, "server URL, http://HOST:PORT")->required();
  app.add_option("--model", o.model, "model name sent in requests")->required();
  app.add_option("--api", api, "chat | completions")->check(CLI::IsMember({"chat", "completions"}));
  auto* rate_opt = app.add_option("--rate", rate, "requests per second (open loop)");
  app.add_flag("--poisson", o.poisson, "Poisson arrivals instead of uniform gaps");
  auto* conc_opt = app.add_option("--concurrency", concurrency,
                                  "cap on requests in flight (alone: closed loop)");
  auto* num_opt = app.add_option("--num-requests", num_requests, "number of requests");
  auto* dur_opt = app.add_option("--duration", duration, "seconds of sending");
  app.add_option("--prompts", o.prompts_file, "conversations / ShareGPT JSONL (datagen output)");
  auto* in_opt = app.add_option("--random-input-len", in_len, "random prompts of L words");
  auto* out_opt = app.add_option("--random-output-len", out_len, "L output tokens (ignore_eos)");
  auto* max_opt = app.add_option("--max-tokens", max_tokens, "max_tokens (default 256)");
  auto* temp_opt = app.add_option("--temperature", temperature, "sampling temperature");
  app.add_option("--seed", o.seed, "seed for the schedule and random prompts");
  app.add_option("--request-timeout", o.request_timeout_s, "seconds per request (default 600)");
  app.add_option("--baseline", o.baseline_file, "an earlier result to compute speed-ups against");
  app.add_option("--out", o.out_file, "result JSON (default bench_result.json)");
  app.add_option("--metrics-style", style, "vllm | sglang | auto | none")
      ->check(CLI::IsMember({"vllm", "sglang", "auto", "none"}));
  app.add_option("--max-failed-fraction", o.max_failed_fraction,
                 "exit non-zero when more requests fail (default 0.01)");
  app.add_flag("--no-records", no_records, "leave the per-request records out of the result");
  app.add_option("--log-level", log_level, "debug | info | warn | error");
  CLI11_PARSE(app, argc, argv);

  SetupLogging(log_level);
  o.api = *ParseOpenAiApi(api);
  o.metrics_style = *ParseMetricsStyle(style);
  if (rate_opt->count()) o.rate = rate;
  if (conc_opt->count()) o.concurrency = concurrency;
  if (num_opt->count()) o.num_requests = num_requests;
  if (dur_opt->count()) o.duration_s = duration;
  if (in_opt->count()) o.random_input_len = in_len;
  if (out_opt->count()) o.random_output_len = out_len;
  if (max_opt->count()) o.max_tokens = max_tokens;
  if (temp_opt->count()) o.temperature = temperature;
  o.keep_records = !no_records;

  EventWriter events = EventWriter::FromEnv();
  auto outcome = RunBench(o, events);
  if (!outcome.ok()) {
    std::string msg = ToStd(outcome.status().message());
    events.Message("error", msg);
    std::fprintf(stderr, "lh-bench: %s\n", msg.c_str());
    return 2;
  }
  std::fputs(FormatBenchSummary(outcome->result).c_str(), stdout);
  if (outcome->interrupted) return 130;
  if (outcome->too_many_failures) {
    std::fprintf(stderr, "lh-bench: too many failed requests (see errors in %s)\n",
                 o.out_file.c_str());
    return 1;
  }
  return 0;
}
