// lh-extract's refengine backend: runs the reference target over conversation samples and
// stores its per-position states (input_ids, loss_mask, hidden_state, aux_hidden_state) as
// binary shards plus manifest.json (stages/refmodel/state_shard.h, docs/refengine.md).
//
// Resumable: shards are written atomically and recorded in the manifest one by one; a run
// over an output dir whose manifest lists complete shards skips them. A manifest made from a
// different data file, target or shard size is an error, never silently mixed.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "core/event_writer.h"
#include "core/status.h"

namespace longhaul::extract {

struct RefengineExtractOptions {
  std::string data;  // conversations JSONL
  std::string out;   // output directory
  int64_t shard_size = 256;
  std::string corpus;        // empty: the repo's corpus
  int64_t max_samples = -1;  // < 0: all
};

// Events: progress (samples), metrics (samples, tokens, loss_tokens, bytes, ...), output
// `hidden_states` (the directory), artifact `hidden_states` (the manifest). `log` gets
// human-readable lines.
Status RunRefengineExtract(const RefengineExtractOptions& options, EventWriter& events,
                           std::ostream& log);

}  // namespace longhaul::extract
