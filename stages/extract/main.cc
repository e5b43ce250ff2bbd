// lh-extract: the target's hidden states over generated conversations, for drafter training
// (ENGINES.md, "The EAGLE-3 pipeline"; docs/refengine.md).
#include <CLI/CLI.hpp>
#include <iostream>

#include "core/event_writer.h"
#include "core/logging.h"
#include "stages/extract/refengine_extract.h"

int main(int argc, char** argv) {
  longhaul::extract::RefengineExtractOptions o;
  std::string backend;
  CLI::App app{
      "lh-extract: run the target model over conversation samples (JSONL from lh-datagen) and "
      "write its per-position states (input_ids, loss_mask, hidden_state, aux_hidden_state) as "
      "binary shards plus manifest.json. Re-running over the same --out skips finished shards. "
      "Reports progress, metrics and the manifest as stage events when $LONGHAUL_EVENTS is set."};
  app.add_option("--backend", backend, "refengine (the reference target, in-process)")->required();
  app.add_option("--data", o.data, "conversations JSONL")->required();
  app.add_option("--out", o.out, "output directory")->required();
  app.add_option("--shard-size", o.shard_size, "samples per shard")->capture_default_str();
  app.add_option("--corpus", o.corpus,
                 "the target's corpus, as given to lh-refengine (default: the repo's)");
  app.add_option("--max-samples", o.max_samples, "use only the first N samples");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit with 2, as the longhaul CLI does; --help with 0.
    return app.exit(e) == 0 ? 0 : 2;
  }
  longhaul::SetupLogging("info");
  if (backend != "refengine") {
    std::cerr << "lh-extract: --backend '" << backend
              << "' is not available in this build (expected refengine)\n";
    return 2;
  }
  longhaul::EventWriter events = longhaul::EventWriter::FromEnv();
  longhaul::Status s = longhaul::extract::RunRefengineExtract(o, events, std::cout);
  if (!s.ok()) {
    std::cerr << "lh-extract: " << s.message() << "\n";
    events.Message("error", std::string(s.message()));
    return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}
