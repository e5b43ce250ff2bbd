// The consistency rules of an EAGLE-3 draft vocabulary (docs/engines.md, "The EAGLE-3 pipeline"):
//   d2t[d]  offsets, target id = d + d2t[d], one entry per draft token
//   t2d[t]  1 where target token t is in the draft vocabulary, over the whole target vocab
// d2t must have draft_vocab_size entries, each inside the target vocabulary and used once;
// t2d must hold only 0/1, cover the target vocabulary and mark exactly draft_vocab_size
// tokens; every mapped target id must be marked and every marked one reached.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "stages/inspect/report.h"

namespace longhaul::inspect {

struct VocabMappingInput {
  const std::vector<int64_t>* d2t = nullptr;  // null: not found
  const std::vector<int64_t>* t2d = nullptr;
  std::string d2t_file, t2d_file, dir;       // for messages
  std::optional<int64_t> draft_vocab_size;   // the drafter config's
  std::optional<int64_t> target_vocab_size;  // the drafter config's
  std::string target_vocab_source;           // "DIR/config.json says vocab_size", for messages
  // Bound of target ids when t2d is missing (the target's vocab, else the config's).
  std::optional<int64_t> target_vocab_bound;
  bool refengine_layout = false;  // its loader needs increasing ids and a t2d
};

struct VocabMappingFigures {
  int64_t t2d_ones = 0;
  int64_t out_of_range = 0;   // d2t entries outside the target vocabulary
  int64_t disagreements = 0;  // d2t entries mapping to an id t2d does not mark
};

using AddFinding = std::function<void(Severity, std::string check, std::string text)>;

// Each broken rule is one finding (checks no_d2t, no_t2d, t2d_values, t2d_length, t2d_count,
// d2t_length, d2t_out_of_range, d2t_duplicate, d2t_t2d_disagree, t2d_unmapped, d2t_order),
// naming the file and the first offending entry.
VocabMappingFigures CheckVocabMapping(const VocabMappingInput& in, const AddFinding& add);

}  // namespace longhaul::inspect
