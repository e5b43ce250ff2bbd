#include "stages/refmodel/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace longhaul::refmodel {
namespace {

uint64_t SplitMix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(uint64_t seed) {
  for (uint64_t& s : s_) s = SplitMix(seed);
}

uint64_t Rng::Next() {
  uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

double Rng::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

double Rng::Normal() {
  double u1 = Uniform();
  double u2 = Uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

uint64_t Rng::Below(uint64_t n) {
  // Rejection keeps the result unbiased.
  uint64_t limit = ~0ull - (~0ull % n);
  uint64_t x;
  do {
    x = Next();
  } while (x >= limit);
  return x % n;
}

int32_t Argmax(std::span<const float> probs) {
  // Two vectorizable passes (max, then its first index) beat one max_element pass, which
  // the compiler cannot vectorize; this runs once per generated token.
  const float* p = probs.data();
  const size_t n = probs.size();
  float best = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : best)
  for (size_t i = 0; i < n; ++i) best = std::max(best, p[i]);
  for (size_t i = 0; i < n; ++i) {
    if (p[i] == best) return static_cast<int32_t>(i);
  }
  return 0;
}

int32_t SampleIndex(std::span<const float> probs, Rng& rng) {
  double total = 0;
  for (float p : probs) total += p;
  double u = rng.Uniform() * total;
  double acc = 0;
  int32_t last_nonzero = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] <= 0) continue;
    acc += probs[i];
    last_nonzero = static_cast<int32_t>(i);
    if (u < acc) return last_nonzero;
  }
  return last_nonzero;  // rounding left u at the very top
}

void ProcessProbs(std::span<const float> probs, const SamplingParams& params,
                  std::vector<float>* out) {
  const size_t n = probs.size();
  out->assign(n, 0.0f);
  if (params.greedy()) {
    (*out)[Argmax(probs)] = 1.0f;
    return;
  }
  std::vector<float>& q = *out;
  if (params.temperature == 1.0) {
    std::copy(probs.begin(), probs.end(), q.begin());
  } else {
    const float pmax = *std::max_element(probs.begin(), probs.end());
    const float inv_t = static_cast<float>(1.0 / params.temperature);
    for (size_t i = 0; i < n; ++i) {
      q[i] = probs[i] > 0 ? std::pow(probs[i] / pmax, inv_t) : 0.0f;
    }
  }
  double total = 0;
  for (float v : q) total += v;
  if (params.top_p < 1.0) {
    std::vector<int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](int32_t a, int32_t b) { return q[a] != q[b] ? q[a] > q[b] : a < b; });
    // A hair of tolerance so that float rounding does not pull in one more token when the
    // kept mass equals top_p exactly.
    double need = params.top_p * total - 1e-6 * total;
    double acc = 0;
    size_t keep = 0;
    while (keep < n && acc < need) acc += q[order[keep++]];
    for (size_t k = keep; k < n; ++k) q[order[k]] = 0.0f;
    total = acc;
  }
  float inv = static_cast<float>(1.0 / total);
  for (float& v : q) v *= inv;
}

}  // namespace longhaul::refmodel
