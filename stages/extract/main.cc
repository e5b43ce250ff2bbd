// lh-extract: the target's hidden states over generated conversations, for drafter training
// (docs/engines.md, "The EAGLE-3 pipeline"; docs/refengine.md; docs/stages.md for
// --backend command).
#include <CLI/CLI.hpp>
#include <iostream>

#include "core/event_writer.h"
#include "core/logging.h"
#include "stages/command/command_flags.h"
#include "stages/extract/refengine_extract.h"

int main(int argc, char** argv) {
  longhaul::extract::RefengineExtractOptions o;
  longhaul::command::BackendFlags flags("lh-extract");
  CLI::App app{
      "lh-extract: run the target model over conversation samples (JSONL from lh-datagen) and "
      "write its per-position states (input_ids, loss_mask, hidden_state, aux_hidden_state) as "
      "binary shards plus manifest.json. Re-running over the same --out skips finished shards. "
      "With --backend command, supervises an external extraction command given after '--' "
      "instead. Reports progress, metrics and outputs as stage events when $LONGHAUL_EVENTS is "
      "set."};
  longhaul::command::AddBackendFlags(
      app, flags, "the reference target",
      "output directory (command: where its outputs are checked; default .)");
  flags.refengine_only = {
      app.add_option("--data", o.data, "conversations JSONL (refengine)"),
      app.add_option("--shard-size", o.shard_size, "samples per shard")->capture_default_str(),
      app.add_option("--corpus", o.corpus,
                     "the target's corpus, as given to lh-refengine (default: the repo's)"),
      app.add_option("--max-samples", o.max_samples, "use only the first N samples")};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit with 2, as the longhaul CLI does; --help with 0.
    return app.exit(e) == 0 ? 0 : 2;
  }
  longhaul::SetupLogging("info");
  longhaul::EventWriter events = longhaul::EventWriter::FromEnv();
  return longhaul::command::RunBackend(
      flags, o.data, longhaul::command::ResumeFromEnv(), events, [&](const std::string& out) {
        o.out = out;
        return longhaul::extract::RunRefengineExtract(o, events, std::cout);
      });
}
