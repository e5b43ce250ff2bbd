// lh-finetune: trains an EAGLE-3-style drafter on lh-extract's hidden states
// (docs/engines.md, "The EAGLE-3 pipeline"; docs/refengine.md; docs/stages.md for
// --backend command).
#include <CLI/CLI.hpp>
#include <iostream>

#include "core/event_writer.h"
#include "core/logging.h"
#include "stages/command/command_flags.h"
#include "stages/finetune/refengine_finetune.h"

int main(int argc, char** argv) {
  longhaul::finetune::RefengineFinetuneOptions o;
  longhaul::command::BackendFlags flags("lh-finetune");
  CLI::App app{
      "lh-finetune: train a drafter on hidden states from lh-extract, one checkpoint per epoch "
      "(OUT/ckpt/epoch-N), the final drafter exported to OUT/drafter. With --resume or "
      "LONGHAUL_RESUME=1 it continues after the newest checkpoint. With --backend command, "
      "supervises an external training command given after '--' instead. Reports loss, "
      "checkpoints and outputs as stage events when $LONGHAUL_EVENTS is set."};
  longhaul::command::AddBackendFlags(
      app, flags, "the reference drafter",
      "output directory (command: where checkpoints and outputs are found; default .)");
  flags.refengine_only = {
      app.add_option("--data", o.data, "lh-extract output directory (with manifest.json)"),
      app.add_option("--epochs", o.epochs, "training epochs (0: export the untrained drafter)")
          ->capture_default_str(),
      app.add_option("--lr", o.learning_rate, "Adam learning rate")->capture_default_str(),
      app.add_option("--draft-vocab-size", o.draft_vocab_size, "draft vocabulary size")
          ->capture_default_str(),
      app.add_option("--hidden-size", o.hidden_size, "drafter hidden size")->capture_default_str(),
      app.add_option("--batch-size", o.batch_size, "positions per optimizer step")
          ->capture_default_str(),
      app.add_option("--ttt-steps", o.ttt_steps, "drafting steps unrolled in training")
          ->capture_default_str(),
      app.add_option("--seed", o.seed, "initialisation and data-order seed")->capture_default_str(),
      app.add_option("--log-every", o.log_every, "emit the loss metric every N steps")
          ->capture_default_str()};
  app.add_flag("--resume", o.resume, "continue after the newest checkpoint in --out");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit with 2, as the longhaul CLI does; --help with 0.
    return app.exit(e) == 0 ? 0 : 2;
  }
  longhaul::SetupLogging("info");
  o.resume = o.resume || longhaul::command::ResumeFromEnv();
  longhaul::EventWriter events = longhaul::EventWriter::FromEnv();
  return longhaul::command::RunBackend(
      flags, o.data, o.resume, events, [&](const std::string& out) {
        o.out = out;
        return longhaul::finetune::RunRefengineFinetune(o, events, std::cout);
      });
}
