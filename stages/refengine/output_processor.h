// Turns one request's generated tokens into the text an OpenAI client sees, incrementally.
//
// Chat: a <think> token opens the reasoning section and </think> closes it, so reasoning and
// content come out separately; newlines at the start and end of each section are dropped
// ("<think>\nX\n</think>\nY" gives reasoning "X" and content "Y"), as reasoning parsers do.
// Completions: one text, spaced as it continues the prompt. Special tokens produce no text
// (vLLM's skip_special_tokens); <|end|> ends the output unless ignore_eos. The concatenated
// deltas always equal the final texts.
// Stop strings apply to the content (completions: the text): the output is cut before the
// first match, and TakeDelta() holds back a tail that could still become a match.
// Not thread-safe; one per request.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stages/refmodel/tokenizer.h"

namespace longhaul::refengine {

struct TextDelta {
  std::string reasoning;
  std::string content;
  bool empty() const { return reasoning.empty() && content.empty(); }
};

class OutputProcessor {
 public:
  // `prompt_last` is the prompt's last token for completions (spacing of the first piece).
  OutputProcessor(const refmodel::Tokenizer* tokenizer, bool chat, bool ignore_eos,
                  std::vector<std::string> stop, int32_t prompt_last = -1);

  // Feeds one generated token. Returns false once the output has ended (end token or stop
  // string); later tokens must not be fed.
  bool Add(int32_t token);
  bool stopped() const { return stopped_; }
  // Text not yet taken; with `final`, everything (nothing is held back).
  TextDelta TakeDelta(bool final);

  const std::string& content() const { return content_.text; }
  const std::string& reasoning() const { return reasoning_.text; }

 private:
  struct Section {
    std::string text;
    size_t sent = 0;
    int32_t prev = -1;
    int held_newlines = 0;  // chat: trailing newlines, written only if more text follows
  };
  void Append(Section& s, int32_t token);
  void CheckStop(size_t old_size);
  size_t HoldBack() const;

  const refmodel::Tokenizer* tokenizer_;
  bool chat_;
  bool ignore_eos_;
  std::vector<std::string> stop_;
  size_t max_stop_ = 0;
  bool in_reasoning_ = false;
  bool stopped_ = false;
  Section reasoning_, content_;
};

}  // namespace longhaul::refengine
