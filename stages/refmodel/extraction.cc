#include "stages/refmodel/extraction.h"

#include <algorithm>

#include "core/strings.h"

namespace longhaul::refmodel {

Result<StateSequence> ExtractStates(const TargetModel& target, const ConversationSample& sample) {
  auto rendered = RenderChatTokens(target.tokenizer(), sample.messages);
  if (!rendered.ok()) return Annotate(rendered.status(), StrCat("sample '", sample.id, "'"));
  if (std::find(rendered->loss_mask.begin(), rendered->loss_mask.end(), 1) ==
      rendered->loss_mask.end()) {
    return absl::InvalidArgumentError(
        StrCat("sample '", sample.id, "': no assistant turn to learn from"));
  }
  StateSequence s;
  s.id = sample.id;
  s.input_ids = std::move(rendered->ids);
  s.loss_mask = std::move(rendered->loss_mask);
  target.SequenceStates(s.input_ids, &s.hidden_state, &s.aux_hidden_state);
  return s;
}

}  // namespace longhaul::refmodel
