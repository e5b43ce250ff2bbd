#include "stages/datagen/sample_store.h"

#include <gtest/gtest.h>

#include "tests/testing/test_util.h"

namespace longhaul::stages {
namespace {

using testing::ReadTextFile;
using testing::TempDir;
using testing::WriteTextFile;

Conversation Sample(const std::string& id) {
  Conversation c;
  c.id = id;
  c.id_json = id;
  c.messages = {ChatMessage("user", "q " + id), ChatMessage("assistant", "a", "because")};
  c.reasoning = "because";
  return c;
}

TEST(SampleStoreTest, ResumesFromFinishedIdsAndCutsATornLine) {
  TempDir dir;
  std::string out = dir.Join("out.jsonl"), failed = dir.Join("out.failed.jsonl");
  WriteTextFile(
      out,
      "{\"id\":\"a\",\"conversations\":[]}\n{\"id\":3,\"conversations\":[]}\n{\"id\":\"c\",\"conv");
  WriteTextFile(failed, "{\"id\":\"old\"}\n");
  auto store = SampleStore::Open(out, failed);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE(store->Finished("a"));
  EXPECT_TRUE(store->Finished("3"));
  EXPECT_FALSE(store->Finished("c"));
  EXPECT_EQ(store->truncated_bytes(), 15);
  EXPECT_EQ(ReadTextFile(failed), "");  // earlier failures are tried again
  ASSERT_TRUE(store->AppendSample(Sample("c")).ok());
  auto lines = ReadTextFile(out);
  EXPECT_NE(lines.find("{\"id\":3,\"conversations\":[]}\n{\"conversations\":"), std::string::npos)
      << lines;
  EXPECT_NE(lines.find("\"reasoning\":\"because\""), std::string::npos);
}

TEST(SampleStoreTest, NeverWritesAnIdTwice) {
  TempDir dir;
  auto store = SampleStore::Open(dir.Join("o.jsonl"), dir.Join("f.jsonl"));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->AppendSample(Sample("x")).ok());
  EXPECT_EQ(store->AppendSample(Sample("x")).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store->AppendFailure(Sample("y"), "HTTP 500: boom", 6).ok());
  EXPECT_EQ(ReadTextFile(dir.Join("f.jsonl")),
            "{\"attempts\":6,\"error\":\"HTTP 500: boom\",\"id\":\"y\"}\n");
}

TEST(SampleStoreTest, CorruptMiddleLineIsAnError) {
  TempDir dir;
  WriteTextFile(dir.Join("o.jsonl"), "{\"id\":\"a\"}\n{\"no_id\":1}\n");
  auto store = SampleStore::Open(dir.Join("o.jsonl"), dir.Join("f.jsonl"));
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(store.status().message().find("o.jsonl:2"), std::string::npos);
}

}  // namespace
}  // namespace longhaul::stages
