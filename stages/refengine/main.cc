// lh-refengine: a small CPU language-model server that speaks the OpenAI API and does real
// draft-then-verify speculative decoding (docs/refengine.md).
#include <CLI/CLI.hpp>
#include <iostream>

#include "core/logging.h"
#include "stages/refengine/server.h"

int main(int argc, char** argv) {
  using longhaul::refengine::MetricsStyle;
  longhaul::refengine::ServerOptions o;
  std::string metrics_style = "vllm", log_level = "info";
  CLI::App app{
      "lh-refengine: an OpenAI-compatible server over the reference language model, with real "
      "EAGLE-3-style speculative decoding when --drafter is given. Prints 'listening on "
      "HOST:PORT' once bound and 'ready: ...' once the model is loaded."};
  app.add_option("--host", o.host, "address to bind")->capture_default_str();
  app.add_option("--port", o.port, "port to bind; 0 picks a free one")->capture_default_str();
  app.add_option("--port-file", o.port_file, "write the bound port to this file");
  app.add_option("--model-name", o.model_name, "the served model name")->capture_default_str();
  app.add_option("--corpus", o.corpus, "training text of the target (default: the repo's corpus)");
  app.add_option("--seed", o.seed, "sampling seed for requests that give none")
      ->capture_default_str();
  app.add_option("--drafter", o.drafter_dir,
                 "drafter checkpoint directory: enables speculative decoding");
  app.add_option("--num-speculative-tokens", o.num_speculative_tokens, "draft tokens per round (k)")
      ->capture_default_str();
  app.add_flag("--drafter-misaligned", o.drafter_misaligned,
               "fault: feed the drafter the hidden state of position t-1 instead of t");
  app.add_option("--target-step-ms", o.target_step_ms, "simulated time of one target step")
      ->capture_default_str();
  app.add_option("--draft-step-ms", o.draft_step_ms, "simulated time of one drafter step")
      ->capture_default_str();
  app.add_option("--prefill-ms-per-token", o.prefill_ms_per_token,
                 "simulated prefill time per prompt token")
      ->capture_default_str();
  app.add_option("--max-batch", o.max_batch, "most requests per engine step")
      ->capture_default_str();
  app.add_option("--max-model-len", o.max_model_len, "context length: prompt plus output tokens")
      ->capture_default_str();
  app.add_option("--reasoning-field", o.reasoning_field, "reasoning | reasoning_content")
      ->capture_default_str();
  app.add_option("--metrics-style", metrics_style, "vllm | sglang | both")->capture_default_str();
  app.add_option("--health-generate-timeout-s", o.health_generate_timeout_s,
                 "how long /health_generate waits for its one token")
      ->capture_default_str();
  app.add_option("--load-delay-s", o.load_delay_s,
                 "fault: /health answers 503 for at least this long")
      ->capture_default_str();
  app.add_flag("--hang", o.hang, "fault: healthy and accepting requests, never generating");
  app.add_option("--crash-after", o.crash_after,
                 "fault: exit abruptly (code 1) when generation request N+1 arrives");
  app.add_option("--fatal-log-line", o.fatal_log_line,
                 "fault: print this line to stderr at start-up");
  app.add_option("--log-level", log_level, "debug | info | warn | error")->capture_default_str();
  // What the refengine profile's version_command reads (docs/engine-profiles.md).
  app.set_version_flag("--version", "lh-refengine 0.1.0", "print the engine's version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit with 2, as the longhaul CLI does; --help with 0.
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (metrics_style == "vllm") {
    o.metrics_style = MetricsStyle::kVllm;
  } else if (metrics_style == "sglang") {
    o.metrics_style = MetricsStyle::kSglang;
  } else if (metrics_style == "both") {
    o.metrics_style = MetricsStyle::kBoth;
  } else {
    std::cerr << "lh-refengine: --metrics-style '" << metrics_style
              << "' (expected vllm, sglang or both)\n";
    return 2;
  }
  longhaul::SetupLogging(log_level);
  o.handle_signals = true;

  longhaul::refengine::RefEngineServer server(o, std::cout);
  if (auto s = server.Start(); !s.ok()) {
    std::cerr << "lh-refengine: " << s.message() << "\n";
    return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  if (auto s = server.Run(); !s.ok()) {
    std::cerr << "lh-refengine: " << s.message() << "\n";
    return 1;
  }
  return 0;
}
