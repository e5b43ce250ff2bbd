#include "stages/common/jsonl.h"

#include <gtest/gtest.h>

#include "tests/testing/test_util.h"

namespace longhaul::stages {
namespace {

using longhaul::testing::ReadTextFile;
using longhaul::testing::TempDir;
using longhaul::testing::WriteTextFile;
using nlohmann::json;

TEST(JsonlTest, ReadsConversationsShareGptAndMessages) {
  TempDir dir;
  std::string path = dir.Join("in.jsonl");
  WriteTextFile(
      path,
      R"({"id":"a","conversations":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}
{"id":7,"conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"r"}]}

{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}
)");
  auto convs = ReadConversations(path);
  ASSERT_TRUE(convs.ok()) << convs.status();
  ASSERT_EQ(convs->size(), 3u);
  EXPECT_EQ((*convs)[0].id, "a");
  EXPECT_EQ((*convs)[1].id, "7");
  EXPECT_TRUE((*convs)[1].id_json.is_number());
  EXPECT_EQ((*convs)[1].messages[0].role, "user");
  EXPECT_EQ((*convs)[1].messages[1].role, "assistant");
  EXPECT_EQ((*convs)[1].messages[1].content, "r");
  EXPECT_EQ((*convs)[2].id, "2");  // position in the file
  EXPECT_EQ((*convs)[2].messages[0].role, "system");
}

TEST(JsonlTest, ReadsAJsonArray) {
  TempDir dir;
  std::string path = dir.Join("sharegpt.json");
  WriteTextFile(path, R"([{"id":"x","conversations":[{"from":"human","value":"q"}]}])");
  auto convs = ReadConversations(path);
  ASSERT_TRUE(convs.ok()) << convs.status();
  EXPECT_EQ((*convs)[0].messages[0].content, "q");
}

TEST(JsonlTest, ErrorsNameFileLineAndTurn) {
  TempDir dir;
  std::string path = dir.Join("bad.jsonl");
  WriteTextFile(
      path,
      "{\"id\":1,\"conversations\":[]}\n{\"id\":2,\"conversations\":[{\"role\":\"user\"}]}\n");
  auto convs = ReadConversations(path);
  ASSERT_FALSE(convs.ok());
  EXPECT_NE(convs.status().message().find("bad.jsonl:2: conversations[0]: missing 'content'"),
            std::string::npos)
      << convs.status();
  WriteTextFile(path, "{\"id\":1,\"conversations\":[{\"from\":\"alien\",\"value\":\"x\"}]}\n");
  EXPECT_NE(ReadConversations(path).status().message().find("unknown role 'alien'"),
            std::string::npos);
  WriteTextFile(path, "{oops\n");
  EXPECT_NE(ReadConversations(path).status().message().find("bad.jsonl:1: not valid JSON"),
            std::string::npos);
}

TEST(JsonlTest, RecoverTruncatesATornLastLineAndAppendContinues) {
  TempDir dir;
  std::string path = dir.Join("out.jsonl");
  WriteTextFile(path, "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\",\"conv");
  auto rec = RecoverJsonl(path);
  ASSERT_TRUE(rec.ok()) << rec.status();
  ASSERT_EQ(rec->records.size(), 2u);
  EXPECT_EQ(rec->truncated_bytes, 15);  // {"id":"c","conv
  EXPECT_EQ(ReadTextFile(path), "{\"id\":\"a\"}\n{\"id\":\"b\"}\n");
  auto app = JsonlAppender::Open(path);
  ASSERT_TRUE(app.ok());
  ASSERT_TRUE(app->Append(json{{"id", "c"}}).ok());
  EXPECT_EQ(ReadTextFile(path), "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n");
}

TEST(JsonlTest, RecoverOfMissingFileIsEmptyAndCorruptionIsAnError) {
  TempDir dir;
  auto rec = RecoverJsonl(dir.Join("none.jsonl"));
  ASSERT_TRUE(rec.ok());
  EXPECT_TRUE(rec->records.empty());
  WriteTextFile(dir.Join("c.jsonl"), "{\"id\":1}\ngarbage\n{\"id\":2}\n");
  auto bad = RecoverJsonl(dir.Join("c.jsonl"));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("c.jsonl:2"), std::string::npos);
}

TEST(JsonlTest, ConversationToJsonKeepsIdType) {
  Conversation c;
  c.id_json = 42;
  c.id = "42";
  c.messages = {{"user", "q"}, {"assistant", "a"}};
  json j = ConversationToJson(c);
  EXPECT_EQ(j["id"], 42);
  EXPECT_EQ(j["conversations"][1]["content"], "a");
  EXPECT_TRUE(j["reasoning"].is_null());
  c.reasoning = "because";
  EXPECT_EQ(ConversationToJson(c)["reasoning"], "because");
}

}  // namespace
}  // namespace longhaul::stages
