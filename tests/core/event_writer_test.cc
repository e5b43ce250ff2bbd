#include "core/event_writer.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>
#include <vector>

#include "core/event.h"
#include "tests/testing/test_util.h"

namespace longhaul {
namespace {

TEST(EventWriterTest, EveryLineItWritesParses) {
  testing::TempDir dir;
  std::string path = dir.Join("events.jsonl");
  auto w = EventWriter::Open(path);
  ASSERT_TRUE(w.ok()) << w.status();
  w->Progress(3, 10, "samples");
  w->Progress(4, std::nullopt, "");
  w->Metric("loss", 1.25, 7);
  w->Output("endpoint", "http://127.0.0.1:1234");
  w->Artifact("samples", "samples.jsonl", 99);
  w->Checkpoint("ckpt/epoch-1", 1);
  w->Ready();
  w->Message("warn", "quote \" and newline \n inside");
  std::istringstream in(testing::ReadTextFile(path));
  std::string line;
  std::vector<EventType> types;
  while (std::getline(in, line)) {
    auto ev = ParseEventLine(line);
    ASSERT_TRUE(ev.ok()) << line << ": " << ev.status();
    types.push_back(ev->type);
  }
  EXPECT_EQ(types.size(), 8u);
  EXPECT_EQ(types.back(), EventType::kMessage);
}

TEST(EventWriterTest, LinesFromManyThreadsNeverInterleave) {
  testing::TempDir dir;
  std::string path = dir.Join("events.jsonl");
  auto w = EventWriter::Open(path);
  ASSERT_TRUE(w.ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&w, t] {
      for (int i = 0; i < 500; ++i) w->Metric("m" + std::to_string(t), i, i);
    });
  }
  for (auto& th : threads) th.join();
  std::istringstream in(testing::ReadTextFile(path));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ASSERT_TRUE(ParseEventLine(line).ok()) << line;
    ++n;
  }
  EXPECT_EQ(n, 2000);
}

TEST(EventWriterTest, WithoutEnvironmentItIsANoOp) {
  ::unsetenv("LONGHAUL_EVENTS");
  EventWriter w = EventWriter::FromEnv();
  EXPECT_FALSE(w.enabled());
  w.Progress(1, 2, "x");  // must not crash
}

}  // namespace
}  // namespace longhaul
