#include "agent/lib/utf8_repair.h"

#include <gtest/gtest.h>

#include "core/utf8.h"
#include "longhaul/v1/agent.pb.h"

namespace longhaul::agent {
namespace {

TEST(RepairUtf8Test, RepairsStringsAtAnyDepthAndLeavesBytesAlone) {
  v1::AgentMessage msg;
  v1::Hello* hello = msg.mutable_hello();
  hello->set_agent_id("n0");
  hello->set_hostname("host\xFF");
  (*hello->mutable_labels())["gpu"] = "H200 \xC3";
  std::string wire;
  // As sent before the repair, the coordinator could not parse it.
  ASSERT_TRUE(msg.SerializeToString(&wire));
  v1::AgentMessage parsed;
  EXPECT_FALSE(parsed.ParseFromString(wire));

  EXPECT_EQ(RepairUtf8(&msg), 2);
  EXPECT_EQ(msg.hello().agent_id(), "n0");
  EXPECT_EQ(msg.hello().hostname(), "host\xEF\xBF\xBD");
  EXPECT_EQ(msg.hello().labels().at("gpu"), "H200 \xEF\xBF\xBD");
  ASSERT_TRUE(msg.SerializeToString(&wire));
  EXPECT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(RepairUtf8(&msg), 0);

  v1::AgentMessage log;
  log.mutable_log()->set_data("\xFF\xFE binary");  // bytes: any content is fine
  log.mutable_log()->set_error("open /data/\xE2\x82: No such file");
  EXPECT_EQ(RepairUtf8(&log), 1);
  EXPECT_EQ(log.log().data(), "\xFF\xFE binary");
  EXPECT_TRUE(IsValidUtf8(log.log().error()));
}

}  // namespace
}  // namespace longhaul::agent
