// lh-finetune: trains an EAGLE-3-style drafter on lh-extract's hidden states
// (ENGINES.md, "The EAGLE-3 pipeline"; docs/refengine.md).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "core/event_writer.h"
#include "core/logging.h"
#include "stages/finetune/refengine_finetune.h"

int main(int argc, char** argv) {
  longhaul::finetune::RefengineFinetuneOptions o;
  std::string backend;
  CLI::App app{
      "lh-finetune: train a drafter on hidden states from lh-extract, one checkpoint per epoch "
      "(OUT/ckpt/epoch-N), the final drafter exported to OUT/drafter. With --resume or "
      "LONGHAUL_RESUME=1 it continues after the newest checkpoint. Reports loss per step, "
      "per-epoch metrics, checkpoints and the drafter as stage events when $LONGHAUL_EVENTS is "
      "set."};
  app.add_option("--backend", backend, "refengine (the reference drafter, in-process)")->required();
  app.add_option("--data", o.data, "lh-extract output directory (with manifest.json)")->required();
  app.add_option("--out", o.out, "output directory")->required();
  app.add_option("--epochs", o.epochs, "training epochs (0: export the untrained drafter)")
      ->capture_default_str();
  app.add_option("--lr", o.learning_rate, "Adam learning rate")->capture_default_str();
  app.add_option("--draft-vocab-size", o.draft_vocab_size, "draft vocabulary size")
      ->capture_default_str();
  app.add_option("--hidden-size", o.hidden_size, "drafter hidden size")->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "positions per optimizer step")
      ->capture_default_str();
  app.add_option("--ttt-steps", o.ttt_steps, "drafting steps unrolled in training")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "initialisation and data-order seed")->capture_default_str();
  app.add_option("--log-every", o.log_every, "emit the loss metric every N steps")
      ->capture_default_str();
  app.add_flag("--resume", o.resume, "continue after the newest checkpoint in --out");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit with 2, as the longhaul CLI does; --help with 0.
    return app.exit(e) == 0 ? 0 : 2;
  }
  longhaul::SetupLogging("info");
  if (backend != "refengine") {
    std::cerr << "lh-finetune: --backend '" << backend
              << "' is not available in this build (expected refengine)\n";
    return 2;
  }
  if (const char* r = std::getenv("LONGHAUL_RESUME"); r != nullptr && std::strcmp(r, "1") == 0) {
    o.resume = true;
  }
  longhaul::EventWriter events = longhaul::EventWriter::FromEnv();
  longhaul::Status s = longhaul::finetune::RunRefengineFinetune(o, events, std::cout);
  if (!s.ok()) {
    std::cerr << "lh-finetune: " << s.message() << "\n";
    events.Message("error", std::string(s.message()));
    return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}
