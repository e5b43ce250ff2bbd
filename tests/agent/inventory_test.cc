#include "agent/lib/inventory.h"

#include <gtest/gtest.h>

namespace longhaul::agent {
namespace {

TEST(InventoryTest, ParsesMemTotal) {
  auto bytes = ParseMemTotal("MemFree: 1 kB\nMemTotal:       16337492 kB\n");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 16337492LL * 1024);
  EXPECT_FALSE(ParseMemTotal("MemFree: 1 kB\n").ok());
}

TEST(InventoryTest, ParsesMemorySizes) {
  EXPECT_EQ(*ParseMemorySize("16G"), 16LL << 30);
  EXPECT_EQ(*ParseMemorySize("16GiB"), 16LL << 30);
  EXPECT_EQ(*ParseMemorySize("512M"), 512LL << 20);
  EXPECT_EQ(*ParseMemorySize("1.5T"), 3LL << 39);
  EXPECT_EQ(*ParseMemorySize("1024"), 1024);
  EXPECT_FALSE(ParseMemorySize("lots").ok());
  EXPECT_FALSE(ParseMemorySize("-1G").ok());
}

TEST(InventoryTest, TakesTheBackendsGpusAndFlagsOverride) {
  std::vector<GpuInfo> found = {{0, "Fake GPU", 1000, "GPU-a"}, {1, "Fake GPU", 1000, "GPU-b"}};
  Inventory inv = DetectInventory({}, found);
  Inventory declared = DetectInventory({.cpus = 3, .memory_bytes = 1 << 20, .gpus = 1}, found);
  EXPECT_EQ(inv.gpus, 2);
  ASSERT_EQ(inv.gpu_list.size(), 2u);
  EXPECT_EQ(inv.gpu_list[1].uuid, "GPU-b");
  EXPECT_GE(inv.cpus, 1);
  EXPECT_GT(inv.memory_bytes, 0);
  EXPECT_EQ(declared.gpus, 1);
  EXPECT_EQ(declared.cpus, 3);
  EXPECT_EQ(declared.memory_bytes, 1 << 20);
  EXPECT_EQ(DetectInventory({}, {}).gpus, 0);
}

}  // namespace
}  // namespace longhaul::agent
