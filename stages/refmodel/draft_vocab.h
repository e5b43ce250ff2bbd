// The drafter's vocabulary, as EAGLE-3 tooling builds it: the N most frequent target tokens of
// the training data, in target-id order, with the mappings
//   d2t[d] = target_id(d) - d        (int64 offsets; target_id = d + d2t[d])
//   t2d[t] = 1 if target token t is in the draft vocabulary
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace longhaul::refmodel {

struct DraftVocab {
  std::vector<int32_t> draft_to_target;  // increasing target ids
  std::vector<int64_t> d2t;
  std::vector<uint8_t> t2d;
  std::vector<int32_t> target_to_draft;  // -1 where t2d is 0

  int size() const { return static_cast<int>(draft_to_target.size()); }
};

// From per-target-token counts (size = target vocab): the `size` most frequent (ties by id);
// when fewer than `size` tokens occur, the rest are the lowest unused ids, so the vocabulary
// always has exactly `size` entries. InvalidArgument if size is not in [1, counts.size()].
Result<DraftVocab> BuildDraftVocab(std::span<const int64_t> counts, int size);

// From stored mappings; checks that d2t and t2d agree and stay in range.
Result<DraftVocab> DraftVocabFromMappings(std::span<const int64_t> d2t,
                                          std::span<const uint8_t> t2d);

}  // namespace longhaul::refmodel
