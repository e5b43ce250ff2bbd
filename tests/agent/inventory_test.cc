#include "agent/lib/inventory.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

TEST(InventoryTest, ParsesNvidiaSmiCsv) {
  // The first line is what nvidia-smi printed on a real H200 node.
  auto gpus = ParseNvidiaSmi("0, NVIDIA H200, 143771\n1, NVIDIA H200, 143771\n\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[1].index, 1);
  EXPECT_EQ((*gpus)[1].name, "NVIDIA H200");
  EXPECT_EQ((*gpus)[1].memory_mib, 143771);
}

TEST(InventoryTest, KeepsAGpuWhoseMemoryIsNotReported) {
  auto gpus = ParseNvidiaSmi("0, Some Board, [N/A]\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_EQ((*gpus)[0].memory_mib, 0);
}

TEST(InventoryTest, BadNvidiaSmiLineIsNamed) {
  auto gpus = ParseNvidiaSmi("0, A, 1\nNVIDIA-SMI has failed\n");
  ASSERT_FALSE(gpus.ok());
  EXPECT_NE(gpus.status().message().find("line 2"), absl::string_view::npos);
}

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

TEST(InventoryTest, DetectsGpusThroughNvidiaSmiOnPathAndFlagsOverride) {
  testing::TempDir dir;
  std::string smi = dir.Join("nvidia-smi");
  testing::WriteTextFile(
      smi,
      "#!/bin/sh\n"
      "[ \"$1\" = --query-gpu=index,name,memory.total ] || exit 3\n"
      "echo '0, Fake GPU, 1000'\necho '1, Fake GPU, 1000'\necho '2, Fake GPU, 1000'\n");
  ::chmod(smi.c_str(), 0755);
  std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (dir.path() + ":/usr/bin:/bin").c_str(), 1);
  Inventory inv = DetectInventory({});
  Inventory declared = DetectInventory({.cpus = 3, .memory_bytes = 1 << 20, .gpus = 1});
  ::setenv("PATH", old_path.c_str(), 1);
  EXPECT_EQ(inv.gpus, 3);
  ASSERT_EQ(inv.gpu_list.size(), 3u);
  EXPECT_EQ(inv.gpu_list[2].name, "Fake GPU");
  EXPECT_GE(inv.cpus, 1);
  EXPECT_GT(inv.memory_bytes, 0);
  EXPECT_EQ(declared.gpus, 1);
  EXPECT_EQ(declared.cpus, 3);
  EXPECT_EQ(declared.memory_bytes, 1 << 20);
}

TEST(InventoryTest, NoNvidiaSmiMeansNoGpus) {
  testing::TempDir dir;
  std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", dir.path().c_str(), 1);
  Inventory inv = DetectInventory({});
  ::setenv("PATH", old_path.c_str(), 1);
  EXPECT_EQ(inv.gpus, 0);
}

}  // namespace
}  // namespace longhaul::agent
