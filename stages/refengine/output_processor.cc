#include "stages/refengine/output_processor.h"

#include <algorithm>

namespace longhaul::refengine {

using refmodel::Tokenizer;

OutputProcessor::OutputProcessor(const Tokenizer* tokenizer, bool chat, bool ignore_eos,
                                 std::vector<std::string> stop, int32_t prompt_last)
    : tokenizer_(tokenizer), chat_(chat), ignore_eos_(ignore_eos), stop_(std::move(stop)) {
  stop_.erase(std::remove(stop_.begin(), stop_.end(), std::string()), stop_.end());
  for (const std::string& s : stop_) max_stop_ = std::max(max_stop_, s.size());
  if (!chat_ && prompt_last >= 0 && !tokenizer_->IsSpecial(prompt_last)) {
    content_.prev = prompt_last;
  }
}

void OutputProcessor::Append(Section& s, int32_t token) {
  if (chat_ && token == tokenizer_->newline_id()) {
    if (!s.text.empty()) ++s.held_newlines;  // leading newlines are dropped
    return;
  }
  for (; s.held_newlines > 0; --s.held_newlines) {
    s.text.push_back('\n');
    s.prev = tokenizer_->newline_id();
  }
  tokenizer_->AppendPiece(s.prev, token, &s.text);
  s.prev = token;
}

bool OutputProcessor::Add(int32_t token) {
  if (stopped_) return false;
  if (token == Tokenizer::kEndId && !ignore_eos_) {
    stopped_ = true;
    return false;
  }
  if (tokenizer_->IsSpecial(token)) {
    if (chat_ && (token == Tokenizer::kThinkStartId || token == Tokenizer::kThinkEndId)) {
      in_reasoning_ = token == Tokenizer::kThinkStartId;
      Section& s = in_reasoning_ ? reasoning_ : content_;
      s.held_newlines = 0;  // trailing newlines of a section are dropped
      if (s.text.empty()) s.prev = -1;
    }
    return true;
  }
  if (chat_ && in_reasoning_) {
    Append(reasoning_, token);
    return true;
  }
  size_t old_size = content_.text.size();
  Append(content_, token);
  CheckStop(old_size);
  return !stopped_;
}

void OutputProcessor::CheckStop(size_t old_size) {
  if (stop_.empty()) return;
  // A match must end in the new text; start early enough to see one that straddles it.
  std::string& text = content_.text;
  size_t from = old_size >= max_stop_ ? old_size - max_stop_ + 1 : 0;
  size_t best = std::string::npos;
  for (const std::string& s : stop_) best = std::min(best, text.find(s, from));
  if (best == std::string::npos) return;
  text.resize(best);
  stopped_ = true;
}

size_t OutputProcessor::HoldBack() const {
  // The longest tail of the unsent content that is a proper prefix of a stop string.
  const std::string& text = content_.text;
  size_t unsent = text.size() - content_.sent;
  size_t hold = 0;
  for (const std::string& s : stop_) {
    for (size_t len = std::min(unsent, s.size() - 1); len > hold; --len) {
      if (text.compare(text.size() - len, len, s, 0, len) == 0) {
        hold = len;
        break;
      }
    }
  }
  return hold;
}

TextDelta OutputProcessor::TakeDelta(bool final) {
  TextDelta d;
  d.reasoning = reasoning_.text.substr(reasoning_.sent);
  reasoning_.sent = reasoning_.text.size();
  size_t end = content_.text.size() - (final || stopped_ ? 0 : HoldBack());
  if (end > content_.sent) {
    d.content = content_.text.substr(content_.sent, end - content_.sent);
    content_.sent = end;
  }
  return d;
}

}  // namespace longhaul::refengine
