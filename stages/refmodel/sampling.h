// Seeded randomness and the sampling rules shared by target-only and speculative decoding.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace longhaul::refmodel {

// xoshiro256** seeded through splitmix64: the same seed gives the same stream on every
// platform (std:: distributions do not promise that). Not thread-safe; one per sequence.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0);
  uint64_t Next();
  double Uniform();            // [0, 1)
  double Normal();             // standard normal (Box-Muller)
  uint64_t Below(uint64_t n);  // [0, n); REQUIRES n > 0

 private:
  uint64_t s_[4];
};

struct SamplingParams {
  double temperature = 1.0;  // <= 0: greedy (argmax, lowest id on ties)
  double top_p = 1.0;        // nucleus mass in (0, 1]
  bool greedy() const { return temperature <= 0; }
};

// The distribution a sampler draws from: p^(1/T) renormalized, then cut to the smallest set of
// most likely tokens whose mass reaches top_p (ties by id) and renormalized. For greedy params
// the result is one-hot on the argmax. `out` is resized to probs.size().
void ProcessProbs(std::span<const float> probs, const SamplingParams& params,
                  std::vector<float>* out);

int32_t Argmax(std::span<const float> probs);
// Draws an index with probability probs[i] / sum(probs); REQUIRES sum > 0.
int32_t SampleIndex(std::span<const float> probs, Rng& rng);

}  // namespace longhaul::refmodel
