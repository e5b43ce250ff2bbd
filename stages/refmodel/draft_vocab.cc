#include "stages/refmodel/draft_vocab.h"

#include <algorithm>
#include <numeric>

#include "core/strings.h"

namespace longhaul::refmodel {
namespace {

DraftVocab FromTargets(std::vector<int32_t> targets, size_t target_vocab) {
  std::sort(targets.begin(), targets.end());
  DraftVocab v;
  v.draft_to_target = std::move(targets);
  v.t2d.assign(target_vocab, 0);
  v.target_to_draft.assign(target_vocab, -1);
  for (size_t d = 0; d < v.draft_to_target.size(); ++d) {
    int32_t t = v.draft_to_target[d];
    v.d2t.push_back(static_cast<int64_t>(t) - static_cast<int64_t>(d));
    v.t2d[t] = 1;
    v.target_to_draft[t] = static_cast<int32_t>(d);
  }
  return v;
}

}  // namespace

Result<DraftVocab> BuildDraftVocab(std::span<const int64_t> counts, int size) {
  if (size < 1 || static_cast<size_t>(size) > counts.size()) {
    return absl::InvalidArgumentError(StrCat("draft vocab size ", size, " must be in [1, ",
                                             counts.size(), "] (the target vocab size)"));
  }
  std::vector<int32_t> order(counts.size());
  std::iota(order.begin(), order.end(), 0);
  // Zero counts sort after every seen token and among themselves by id: the "lowest unused ids".
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return counts[a] > counts[b]; });
  order.resize(size);
  return FromTargets(std::move(order), counts.size());
}

Result<DraftVocab> DraftVocabFromMappings(std::span<const int64_t> d2t,
                                          std::span<const uint8_t> t2d) {
  std::vector<int32_t> targets;
  for (size_t d = 0; d < d2t.size(); ++d) {
    int64_t t = static_cast<int64_t>(d) + d2t[d];
    if (t < 0 || static_cast<size_t>(t) >= t2d.size()) {
      return absl::InvalidArgumentError(StrCat("d2t[", d, "] maps draft token ", d,
                                               " to target id ", t,
                                               ", outside the target vocab of ", t2d.size()));
    }
    if (!targets.empty() && t <= targets.back()) {
      return absl::InvalidArgumentError(
          StrCat("d2t[", d, "]: target ids must increase (", t, " after ", targets.back(), ")"));
    }
    if (!t2d[t]) {
      return absl::InvalidArgumentError(
          StrCat("d2t maps draft token ", d, " to target id ", t, " but t2d[", t, "] is 0"));
    }
    targets.push_back(static_cast<int32_t>(t));
  }
  size_t marked = std::count(t2d.begin(), t2d.end(), uint8_t{1});
  if (marked != targets.size()) {
    return absl::InvalidArgumentError(StrCat("t2d marks ", marked, " target tokens but d2t has ",
                                             targets.size(), " draft tokens"));
  }
  return FromTargets(std::move(targets), t2d.size());
}

}  // namespace longhaul::refmodel
