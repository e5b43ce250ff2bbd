// Word-level tokenizer of the reference model.
//
// Tokens are: special markers (<|unk|>, <|end|>, <|user|>, <|assistant|>, <|system|>, <think>,
// </think>), the newline, single punctuation characters (. , ? ! : ; ( ) "), and words (maximal
// runs of other non-space characters). Ids are deterministic: the specials first in that
// order, then every other token of the corpus by descending count, ties by byte order.
// Spaces and tabs only separate tokens, so Encode(Decode(ids)) == ids for any ids, and text
// in the corpus's spacing style survives Decode(Encode(text)) unchanged.
// Immutable after construction; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace longhaul::refmodel {

class Tokenizer {
 public:
  static constexpr std::string_view kUnk = "<|unk|>";
  static constexpr std::string_view kEnd = "<|end|>";
  static constexpr std::string_view kUser = "<|user|>";
  static constexpr std::string_view kAssistant = "<|assistant|>";
  static constexpr std::string_view kSystem = "<|system|>";
  static constexpr std::string_view kThinkStart = "<think>";
  static constexpr std::string_view kThinkEnd = "</think>";

  // Builds the vocabulary from every token of `corpus`.
  static Tokenizer FromCorpus(std::string_view corpus);

  // Unknown words become unk_id().
  std::vector<int32_t> Encode(std::string_view text) const;
  std::string Decode(std::span<const int32_t> ids) const;
  // Appends the text of `id` as it reads after `prev` (-1: at the start), with the separating
  // space when one belongs there. Decode() is AppendPiece over the sequence.
  void AppendPiece(int32_t prev, int32_t id, std::string* out) const;

  int size() const { return static_cast<int>(tokens_.size()); }
  const std::string& TokenText(int32_t id) const { return tokens_[id]; }
  std::optional<int32_t> Find(std::string_view token) const;
  bool IsSpecial(int32_t id) const { return id >= 0 && id < kNumSpecial; }
  // How often each token occurs in the corpus (specials included), by id.
  const std::vector<int64_t>& counts() const { return counts_; }

  static constexpr int32_t kUnkId = 0;
  static constexpr int32_t kEndId = 1;
  static constexpr int32_t kUserId = 2;
  static constexpr int32_t kAssistantId = 3;
  static constexpr int32_t kSystemId = 4;
  static constexpr int32_t kThinkStartId = 5;
  static constexpr int32_t kThinkEndId = 6;
  static constexpr int kNumSpecial = 7;
  int32_t newline_id() const { return newline_id_; }

  // Splits text into token strings (the rule above); exposed for tests.
  static std::vector<std::string_view> Split(std::string_view text);

 private:
  std::vector<std::string> tokens_;
  std::vector<int64_t> counts_;
  std::unordered_map<std::string, int32_t> ids_;
  int32_t newline_id_ = -1;
};

}  // namespace longhaul::refmodel
