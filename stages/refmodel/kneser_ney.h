// Interpolated Kneser-Ney n-gram model (orders 1 to 4) over token ids.
//
// P_n(w | s, h) = max(c(s, h w) - D_n, 0) / c(s, h) + (D_n N1+(s, h .) / c(s, h)) P_{n-1}(w | s,
// h') with raw counts at the highest order, continuation counts (number of distinct left
// neighbours) below it, a discount per order D_n = n1 / (n1 + 2 n2), and a uniform
// distribution under the unigram level, so every token of the vocabulary has mass in every
// context. `s` is a segment label that the caller derives from the whole context (the
// reference model uses it to tell user text, reasoning and answer apart, which three tokens
// of history cannot); every count is kept per segment. Immutable after Train(); thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace longhaul::refmodel {

class KneserNeyModel {
 public:
  static constexpr int kMaxOrder = 4;
  static constexpr int kMaxVocab = 32767;  // ids are packed 15 bits each
  static constexpr int kMaxSegments = 4;   // segments take the top 2 bits of a key

  // segments[i] is the segment of the context that predicts tokens[i].
  // REQUIRES: 1 <= order <= kMaxOrder, 0 < vocab_size <= kMaxVocab, every token < vocab_size,
  // segments.size() == tokens.size(), 0 < num_segments <= kMaxSegments, every segment below it.
  static KneserNeyModel Train(std::span<const int32_t> tokens, std::span<const uint8_t> segments,
                              int vocab_size, int order, int num_segments);

  // Writes p(. | segment, context) into probs[0, vocab_size); only the last order-1 tokens
  // of the context matter.
  void Probs(int segment, std::span<const int32_t> context, float* probs) const;

  int vocab_size() const { return vocab_size_; }
  int order() const { return order_; }
  double discount(int n) const { return discount_[n]; }

 private:
  struct Entry {
    int32_t token;
    float weight;  // max(count - D, 0) / total
  };
  struct Context {
    uint32_t begin = 0;
    uint32_t size = 0;
    float backoff = 0;  // D * N1+(h .) / total
  };

  int vocab_size_ = 0;
  int order_ = 0;
  double discount_[kMaxOrder + 1] = {};
  std::vector<std::vector<float>> unigram_;  // by segment
  // contexts_[n] (n >= 2): contexts of n-1 tokens, packed 15 bits per token, segment on top.
  std::vector<std::unordered_map<uint64_t, Context>> contexts_;
  std::vector<Entry> entries_;
};

}  // namespace longhaul::refmodel
