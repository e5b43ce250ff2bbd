#include "stages/gpucheck/patterns.h"

#include <cstdio>
#include <cstring>

#include "core/strings.h"

namespace longhaul::gpucheck {
namespace {

struct PatternNameEntry {
  Pattern pattern;
  const char* name;
};
constexpr PatternNameEntry kPatternNames[] = {
    {Pattern::kZeros, "zeros"},
    {Pattern::kOnes, "ones"},
    {Pattern::kWalkingOnes, "walking-ones"},
    {Pattern::kWalkingZeros, "walking-zeros"},
    {Pattern::kAddress, "address"},
    {Pattern::kRandom, "random"},
};

// SplitMix64's finaliser over (seed, index): a different, well-mixed word per index.
uint32_t RandomPatternWord(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<uint32_t>(z ^ (z >> 32));
}

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

}  // namespace

std::string PatternName(Pattern p) {
  for (const PatternNameEntry& e : kPatternNames) {
    if (e.pattern == p) return e.name;
  }
  return "?";
}

std::vector<Pattern> AllPatterns() {
  std::vector<Pattern> all;
  for (const PatternNameEntry& e : kPatternNames) all.push_back(e.pattern);
  return all;
}

Result<std::vector<Pattern>> ParsePatterns(const std::string& list) {
  std::vector<Pattern> out;
  for (const std::string& raw : StrSplit(list, ',')) {
    std::string name(StripWhitespace(raw));
    if (name.empty()) continue;
    bool found = false;
    for (const PatternNameEntry& e : kPatternNames) {
      if (name == e.name) {
        out.push_back(e.pattern);
        found = true;
      }
    }
    if (!found) {
      std::vector<std::string> names;
      for (const PatternNameEntry& e : kPatternNames) names.push_back(e.name);
      return absl::InvalidArgumentError(
          StrCat("--patterns: unknown pattern '", name, "' (known: ", StrJoin(names, ", "), ")"));
    }
  }
  if (out.empty()) return absl::InvalidArgumentError("--patterns: no pattern given");
  return out;
}

bool IsSolidPattern(Pattern p) { return p == Pattern::kZeros || p == Pattern::kOnes; }

uint32_t PatternWord(Pattern p, uint64_t seed, uint64_t index) {
  switch (p) {
    case Pattern::kZeros:
      return 0;
    case Pattern::kOnes:
      return 0xffffffffu;
    case Pattern::kWalkingOnes:
      return 1u << (index % 32);
    case Pattern::kWalkingZeros:
      return ~(1u << (index % 32));
    case Pattern::kAddress: {
      uint64_t offset = index * 4;
      return static_cast<uint32_t>(offset) ^ static_cast<uint32_t>(offset >> 32);
    }
    case Pattern::kRandom:
      return RandomPatternWord(seed, index);
  }
  return 0;
}

void FillPattern(Pattern p, uint64_t seed, uint64_t first, uint32_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = PatternWord(p, seed, first + i);
}

void ComparePattern(Pattern p, uint64_t seed, uint64_t first, const uint32_t* got, size_t n,
                    uint32_t* expected_scratch, MismatchSummary& summary) {
  FillPattern(p, seed, first, expected_scratch, n);
  if (std::memcmp(got, expected_scratch, n * sizeof(uint32_t)) == 0) return;
  for (size_t i = 0; i < n; ++i) {
    if (got[i] == expected_scratch[i]) continue;
    ++summary.count;
    if (summary.first.size() < summary.keep) {
      summary.first.push_back({(first + i) * 4, expected_scratch[i], got[i]});
    }
  }
}

std::string DescribeMismatch(const Mismatch& m) {
  char offset_hex[32];
  std::snprintf(offset_hex, sizeof offset_hex, "0x%llx", static_cast<unsigned long long>(m.offset));
  return StrCat("byte offset ", m.offset, " (", offset_hex, "): expected ", Hex32(m.expected),
                ", got ", Hex32(m.got), " (bits ", Hex32(m.expected ^ m.got), " differ)");
}

}  // namespace longhaul::gpucheck
