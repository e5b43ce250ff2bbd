// `lh-inspect drafter`: checks an EAGLE-3 drafter checkpoint against its target before it is
// served (docs/engines.md: a stale or wrong vocab mapping and aux-layer ids the engine does not
// read are common, silent causes of low acceptance).
//
// Checks: config.json's sizes; d2t has draft_vocab_size entries, each target id
// (draft id + d2t[draft id]) inside the target vocabulary and used once; t2d covers the target
// vocabulary with exactly draft_vocab_size ones; the two mappings agree; the aux hidden-state
// layer ids are present at the top level of config.json (`eagle_aux_hidden_state_layer_ids`,
// where vLLM reads them; under `eagle_config` only, some vLLM versions ignore them), distinct
// and inside the target's layers; vocab size, hidden size and target model hash match the
// target. Both checkpoint layouts of drafter_files.h are read.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "core/status.h"
#include "stages/inspect/report.h"

namespace longhaul::inspect {

struct DrafterOptions {
  std::string drafter;        // checkpoint directory
  std::string target_config;  // HF config.json, lh-extract manifest.json, or a dir with one
  std::optional<int64_t> target_vocab_size;  // override / instead of the file
  std::optional<std::string> target_hash;
};

// Errors only when the drafter's config cannot be read (or --target-config cannot); every
// problem of the checkpoint is a finding in section "drafter".
Status InspectDrafter(const DrafterOptions& options, Report& report, std::ostream& out);

}  // namespace longhaul::inspect
