#include "core/memory.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace longhaul {
namespace {

// Whether malloc is AddressSanitizer's (quarantine, its own arenas): glibc's behaviour, which
// these tests check, does not apply then.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// The process's anonymous resident memory, in KiB (RssAnon in /proc/self/status).
long RssAnonKb() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "RssAnon:") {
      status >> value;
      return value;
    }
    status.ignore(1 << 10, '\n');
  }
  return -1;
}

// Waits until `done()` holds, up to `seconds`.
template <typename F>
bool WaitFor(F done, int seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

TEST(ReturnFreedMemorySoonTest, ABurstOfRequestsCostsOneTrim) {
  int before = DeferredMemoryReturns();
  for (int i = 0; i < 100; ++i) ReturnFreedMemorySoon();
  ASSERT_TRUE(WaitFor([&] { return DeferredMemoryReturns() > before; }, 10));
  EXPECT_EQ(DeferredMemoryReturns(), before + 1);
}

TEST(ReturnFreedMemorySoonTest, HandsBackWhatAnotherThreadFreedBelowALiveBlock) {
  if (kAddressSanitizer) {
    GTEST_SKIP() << "AddressSanitizer's allocator keeps freed memory in quarantine";
  }
  // 64 MiB in small blocks on a thread of its own (its own malloc arena), then one block that
  // stays live above them: freeing the rest leaves a free hole that glibc keeps resident,
  // since the arena cannot shrink at its top.
  constexpr size_t kBlocks = 128 * 1024;
  constexpr size_t kBlock = 512;
  std::vector<std::unique_ptr<char[]>> blocks;
  std::unique_ptr<char[]> live;
  std::thread([&] {
    blocks.reserve(kBlocks);
    for (size_t i = 0; i < kBlocks; ++i) {
      blocks.emplace_back(new char[kBlock]);
      for (size_t j = 0; j < kBlock; j += 64) blocks.back()[j] = 1;  // resident
    }
    live.reset(new char[kBlock]);
    live[0] = 1;
    blocks.clear();
    blocks.shrink_to_fit();
  }).join();
  long held = RssAnonKb();
  ASSERT_GT(held, 0);
  ReturnFreedMemorySoon();
  EXPECT_TRUE(WaitFor([&] { return RssAnonKb() < held - 32 * 1024; }, 10))
      << "RssAnon stayed at " << RssAnonKb() << " KiB, from " << held << " KiB";
  EXPECT_EQ(live[0], 1);
}

// Whether the mapping that holds address `at` carries the huge page hint (VmFlags "hg" in
// /proc/self/smaps). False when no mapping holds it.
bool HintedForHugePages(uintptr_t at) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(' ') > line.find('-')) {
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return (line + " ").find(" hg ") != std::string::npos;
    }
  }
  return false;
}

TEST(FixMallocThresholdsTest, AHintedBufferTakesItsHintWithItWhenFreed) {
  if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer has its own allocator";
  FixMallocThresholds();
  // A buffer as the parse of a big workflow makes: 8 MiB, hinted, written.
  std::vector<char> buffer(8 << 20, 1);
  AdviseHugePages(buffer.data(), buffer.size());
  const uintptr_t middle = reinterpret_cast<uintptr_t>(buffer.data()) + buffer.size() / 2;
  if (!HintedForHugePages(middle)) GTEST_SKIP() << "this kernel has no transparent huge pages";
  buffer = std::vector<char>();
  // Inside a malloc arena the freed range would keep the hint, and khugepaged would fill it in
  // again with 2 MiB pages.
  EXPECT_FALSE(HintedForHugePages(middle));
}

TEST(ReturnFreedMemoryTest, TakesBackTheHintOfABufferFreedInsideAnArena) {
  if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer has its own allocator";
  FixMallocThresholds();
  // A free hole of 16 MiB in this thread's arena, below a block that stays live: a big block
  // asked for next is cut from the hole, not given a mapping of its own.
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < 32 * 1024; ++i) blocks.emplace_back(new char[512]);
  std::unique_ptr<char[]> live(new char[512]);
  blocks.clear();
  auto* buffer = static_cast<char*>(std::malloc(8 << 20));
  ASSERT_NE(buffer, nullptr);
  AdviseHugePages(buffer, 8 << 20);
  const uintptr_t middle = reinterpret_cast<uintptr_t>(buffer) + (4 << 20);
  if (!HintedForHugePages(middle)) GTEST_SKIP() << "this kernel has no transparent huge pages";
  std::free(buffer);
  if (!HintedForHugePages(middle)) GTEST_SKIP() << "malloc gave the buffer its own mapping";
  ReturnFreedMemory();
  EXPECT_FALSE(HintedForHugePages(middle));
}

}  // namespace
}  // namespace longhaul
