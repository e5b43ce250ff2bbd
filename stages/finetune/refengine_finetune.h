// lh-finetune's refengine backend: trains the EAGLE-3-shaped reference drafter
// (stages/refmodel/drafter.h) on lh-extract's hidden states, epoch by epoch.
//
// Layout of the output directory:
//   ckpt/epoch-N/   drafter files + optimizer.bin + trainer_state.json, after every epoch
//                   (written to epoch-N.tmp and renamed, so a listed checkpoint is whole)
//   drafter/        the final drafter, loadable by lh-refengine --drafter
// With resume set, training continues after the newest checkpoint: same draft vocabulary,
// weights, optimizer moments and step counter, and the same per-epoch data order, so the loss
// curve continues exactly where an uninterrupted run would be.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "core/event_writer.h"
#include "core/status.h"

namespace longhaul::finetune {

struct RefengineFinetuneOptions {
  std::string data;  // lh-extract output directory
  std::string out;
  int epochs = 3;  // 0 exports the untrained drafter
  double learning_rate = 3e-3;
  int draft_vocab_size = 512;
  int hidden_size = 32;
  int batch_size = 64;
  int ttt_steps = 2;
  uint64_t seed = 1;
  int log_every = 1;  // a loss metric every N optimizer steps
  bool resume = false;
};

// Events: metric `loss` per logged step (step = global optimizer step), per-epoch metrics
// (step = epoch), progress (epochs), a checkpoint event per epoch, and at the end artifact +
// output `drafter`. `log` gets human-readable lines.
Status RunRefengineFinetune(const RefengineFinetuneOptions& options, EventWriter& events,
                            std::ostream& log);

}  // namespace longhaul::finetune
