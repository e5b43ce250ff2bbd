// The target's per-position states over one conversation, as lh-extract stores them.
#pragma once

#include "core/status.h"
#include "stages/refmodel/conversation.h"
#include "stages/refmodel/state_shard.h"
#include "stages/refmodel/target_model.h"

namespace longhaul::refmodel {

// Renders the conversation in the chat template (chat_template.h), runs the target over it and
// returns input_ids, the assistant loss mask, hidden_state and aux_hidden_state. Errors name
// the sample (an unknown role, no assistant turn).
Result<StateSequence> ExtractStates(const TargetModel& target, const ConversationSample& sample);

}  // namespace longhaul::refmodel
