// The memory test's patterns: what each 32-bit word of the tested buffer holds, computed from
// the word's index alone (so any chunk is generated and checked without the rest), and the
// comparison of what was read back against it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::gpucheck {

enum class Pattern {
  kZeros,         // every word 0x00000000 (written with cuMemsetD32)
  kOnes,          // every word 0xffffffff (cuMemsetD32)
  kWalkingOnes,   // word i: 1 << (i % 32): every bit position set alone, through the buffer
  kWalkingZeros,  // word i: ~(1 << (i % 32))
  kAddress,       // word i: its byte offset (low 32 bits xor high 32 bits): aliasing addresses
  kRandom,        // word i: a hash of (seed, i): data-dependent faults
};

// "zeros", "walking-ones", ...: the names --patterns takes.
std::string PatternName(Pattern p);
// Parses a comma-separated list of names; InvalidArgument names the unknown one.
Result<std::vector<Pattern>> ParsePatterns(const std::string& list);
std::vector<Pattern> AllPatterns();

// Whether the pattern is one value everywhere (written with cuMemsetD32).
bool IsSolidPattern(Pattern p);
// The value of word `index` (counted from the start of the buffer).
uint32_t PatternWord(Pattern p, uint64_t seed, uint64_t index);
// Fills `out[0..n)` with words `first .. first+n`.
void FillPattern(Pattern p, uint64_t seed, uint64_t first, uint32_t* out, size_t n);

struct Mismatch {
  uint64_t offset = 0;  // byte offset in the buffer
  uint32_t expected = 0;
  uint32_t got = 0;
};

// What the comparisons found, over every chunk of one buffer.
struct MismatchSummary {
  uint64_t count = 0;           // words that differ
  std::vector<Mismatch> first;  // the first few, in offset order
  size_t keep = 8;              // how many `first` holds at most
};

// Compares `got[0..n)`, read back from words `first .. first+n`, with the pattern and adds the
// words that differ to `summary`. `expected_scratch` holds n words (reused between chunks).
void ComparePattern(Pattern p, uint64_t seed, uint64_t first, const uint32_t* got, size_t n,
                    uint32_t* expected_scratch, MismatchSummary& summary);

// "byte offset 4096 (0x1000): expected 0x00000000, got 0x00000008 (bits 0x00000008 differ)".
std::string DescribeMismatch(const Mismatch& m);

}  // namespace longhaul::gpucheck
