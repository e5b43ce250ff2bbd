// lh-refengine's server: an OpenAI-compatible HTTP API over the reference model with real
// draft-then-verify speculative decoding (docs/refengine.md).
//
//   POST /v1/chat/completions, /v1/completions (streaming or not)
//   GET  /v1/models, /health, /health_generate, /metrics, /get_server_info, /get_model_info
//
// Start() binds and begins loading (the target is trained from the corpus on a background
// thread); /health answers 503 until the model is loaded and --load-delay-s has passed.
// Run() serves on the calling thread until Stop() or a fatal load error.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "core/status.h"
#include "stages/refengine/metrics.h"

namespace longhaul::refengine {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port
  std::string port_file;
  std::string model_name = "refengine";
  std::string corpus;  // empty: the repo's corpus (refmodel::DefaultCorpusPath())
  uint64_t seed = 0;   // sampling seed for requests without one
  std::string drafter_dir;
  int num_speculative_tokens = 3;
  bool drafter_misaligned = false;
  double target_step_ms = 0;
  double draft_step_ms = 0;
  double prefill_ms_per_token = 0;
  int max_batch = 256;
  int max_model_len = 4096;
  std::string reasoning_field = "reasoning";
  MetricsStyle metrics_style = MetricsStyle::kVllm;
  double health_generate_timeout_s = 20;
  bool handle_signals = false;  // SIGTERM/SIGINT stop the server (the binary sets it)
  // Fault switches.
  double load_delay_s = 0;
  bool hang = false;
  int64_t crash_after = -1;  // < 0: never
  std::string fatal_log_line;
};

class RefEngineServer {
 public:
  // `out` receives the "listening on HOST:PORT" and "ready: ..." lines.
  RefEngineServer(ServerOptions options, std::ostream& out);
  ~RefEngineServer();

  // Validates the options, binds, writes --port-file, starts loading.
  Status Start();
  // Serves until Stop(); returns the load error if loading failed.
  Status Run();
  // Thread-safe.
  void Stop();
  int port() const;
  // What --crash-after does; tests replace the default (an immediate _exit(1)).
  void set_crash_action(std::function<void()> fn);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace longhaul::refengine
