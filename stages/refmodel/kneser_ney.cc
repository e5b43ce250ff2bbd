#include "stages/refmodel/kneser_ney.h"

#include <algorithm>
#include <cassert>

namespace longhaul::refmodel {
namespace {

constexpr int kBits = 15;
constexpr uint64_t kIdMask = (1ull << kBits) - 1;
constexpr int kSegmentShift = 62;

uint64_t Pack(int segment, std::span<const int32_t> ids) {
  uint64_t key = 0;
  for (int32_t id : ids) key = (key << kBits) | (static_cast<uint64_t>(id) & kIdMask);
  return key | (static_cast<uint64_t>(segment) << kSegmentShift);
}

int SegmentOf(uint64_t key) { return static_cast<int>(key >> kSegmentShift); }
uint64_t IdsOf(uint64_t key) { return key & ((1ull << kSegmentShift) - 1); }

double EstimateDiscount(const std::unordered_map<uint64_t, uint32_t>& counts) {
  double n1 = 0, n2 = 0;
  for (const auto& [key, c] : counts) {
    if (c == 1) ++n1;
    if (c == 2) ++n2;
  }
  if (n1 + 2 * n2 <= 0) return 0.75;
  return std::clamp(n1 / (n1 + 2 * n2), 0.05, 0.95);
}

// Counts of order n (keys: n packed ids) grouped by their context (the first n-1 ids).
struct Grouped {
  uint64_t context;
  int32_t token;
  uint32_t count;
};

}  // namespace

KneserNeyModel KneserNeyModel::Train(std::span<const int32_t> tokens,
                                     std::span<const uint8_t> segments, int vocab_size, int order,
                                     int num_segments) {
  assert(order >= 1 && order <= kMaxOrder);
  assert(vocab_size > 0 && vocab_size <= kMaxVocab);
  assert(segments.size() == tokens.size());
  assert(num_segments > 0 && num_segments <= kMaxSegments);
  KneserNeyModel m;
  m.vocab_size_ = vocab_size;
  m.order_ = order;
  // counts[n]: raw counts at the top order, continuation counts below it.
  std::vector<std::unordered_map<uint64_t, uint32_t>> counts(order + 1);
  for (size_t i = order - 1; i < tokens.size(); ++i) {
    ++counts[order][Pack(segments[i], tokens.subspan(i + 1 - order, order))];
  }
  for (int n = order - 1; n >= 1; --n) {
    uint64_t mask = (1ull << (kBits * n)) - 1;
    for (const auto& [key, c] : counts[n + 1]) {
      ++counts[n][(key & mask) | (key & (3ull << kSegmentShift))];
    }
  }

  // Unigram level of each segment, interpolated with the uniform distribution.
  m.discount_[1] = EstimateDiscount(counts[1]);
  const double d1 = m.discount_[1];
  const double uniform = 1.0 / vocab_size;
  std::vector<double> total(num_segments, 0.0), types(num_segments, 0.0);
  for (const auto& [key, c] : counts[1]) {
    total[SegmentOf(key)] += c;
    types[SegmentOf(key)] += 1;
  }
  m.unigram_.assign(num_segments, std::vector<float>(vocab_size, 0.0f));
  for (int s = 0; s < num_segments; ++s) {
    double backoff = total[s] > 0 ? d1 * types[s] / total[s] : 1.0;
    std::fill(m.unigram_[s].begin(), m.unigram_[s].end(), static_cast<float>(backoff * uniform));
  }
  for (const auto& [key, c] : counts[1]) {
    int s = SegmentOf(key);
    m.unigram_[s][IdsOf(key)] += static_cast<float>(std::max(c - d1, 0.0) / total[s]);
  }

  m.contexts_.resize(order + 1);
  for (int n = 2; n <= order; ++n) {
    double d = EstimateDiscount(counts[n]);
    m.discount_[n] = d;
    std::vector<Grouped> grouped;
    grouped.reserve(counts[n].size());
    for (const auto& [key, c] : counts[n]) {
      uint64_t context = (IdsOf(key) >> kBits) | (key & (3ull << kSegmentShift));
      grouped.push_back({context, static_cast<int32_t>(key & kIdMask), c});
    }
    std::sort(grouped.begin(), grouped.end(), [](const Grouped& a, const Grouped& b) {
      return a.context != b.context ? a.context < b.context : a.token < b.token;
    });
    auto& ctx_map = m.contexts_[n];
    ctx_map.reserve(grouped.size() / 2);
    for (size_t i = 0; i < grouped.size();) {
      size_t j = i;
      double total = 0;
      while (j < grouped.size() && grouped[j].context == grouped[i].context) {
        total += grouped[j].count;
        ++j;
      }
      Context ctx;
      ctx.begin = static_cast<uint32_t>(m.entries_.size());
      ctx.size = static_cast<uint32_t>(j - i);
      ctx.backoff = static_cast<float>(d * (j - i) / total);
      for (size_t k = i; k < j; ++k) {
        m.entries_.push_back(
            {grouped[k].token, static_cast<float>(std::max(grouped[k].count - d, 0.0) / total)});
      }
      ctx_map.emplace(grouped[i].context, ctx);
      i = j;
    }
  }
  return m;
}

void KneserNeyModel::Probs(int segment, std::span<const int32_t> context, float* probs) const {
  const std::vector<float>& unigram = unigram_[segment];
  std::copy(unigram.begin(), unigram.end(), probs);
  for (int n = 2; n <= order_; ++n) {
    if (context.size() < static_cast<size_t>(n - 1)) break;
    auto it = contexts_[n].find(Pack(segment, context.subspan(context.size() - (n - 1))));
    // An unseen context of n-1 tokens means every longer one is unseen too.
    if (it == contexts_[n].end()) break;
    const Context& ctx = it->second;
    const float backoff = ctx.backoff;
    for (int w = 0; w < vocab_size_; ++w) probs[w] *= backoff;
    const Entry* e = entries_.data() + ctx.begin;
    for (uint32_t k = 0; k < ctx.size; ++k) probs[e[k].token] += e[k].weight;
  }
}

}  // namespace longhaul::refmodel
