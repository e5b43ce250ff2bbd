#include "daemon/server/security.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace longhaul::server {
namespace {

using ::testing::HasSubstr;

std::string Message(const Result<std::vector<std::string>>& r) {
  return std::string(r.status().message());
}

TEST(CheckSecurityTest, LoopbackWithoutTokensServesAndSaysSo) {
  Result<std::vector<std::string>> r = CheckSecurity("127.0.0.1:7070", {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->empty());
  EXPECT_THAT((*r)[0], HasSubstr("no --tokens: serving the client API on loopback only"));
}

TEST(CheckSecurityTest, OffLoopbackRefusesWhatWouldExposeTheCluster) {
  SecurityOptions s;
  Result<std::vector<std::string>> r = CheckSecurity("0.0.0.0:7070", s);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r), HasSubstr("without --tokens anyone who reaches it could run any"));

  s.tokens_file = "tokens";
  r = CheckSecurity("192.0.2.2:7070", s);
  EXPECT_THAT(Message(r), HasSubstr("tokens would cross the network in plaintext"));

  s.tls_cert_file = "c.pem";
  s.tls_key_file = "k.pem";
  r = CheckSecurity("192.0.2.2:7070", s);
  EXPECT_THAT(Message(r), HasSubstr("agents connecting there would be trusted by the id"));

  s.agent_listen = "0.0.0.0:7071";
  s.agent_ca_file = "ca.pem";
  r = CheckSecurity("192.0.2.2:7070", s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->empty());
}

TEST(CheckSecurityTest, InsecureWaivesEachRefusalWithAWarning) {
  SecurityOptions s;
  s.insecure = true;
  Result<std::vector<std::string>> r = CheckSecurity("[::]:7070", s);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_THAT((*r)[0], HasSubstr("--insecure on [::]:7070: no tokens"));
  EXPECT_THAT((*r)[1], HasSubstr("agents are trusted by the id they claim"));
}

TEST(CheckSecurityTest, FlagsThatNeedEachOther) {
  SecurityOptions s;
  s.tls_cert_file = "c.pem";
  EXPECT_THAT(Message(CheckSecurity("127.0.0.1:0", s)), HasSubstr("go together"));
  s = {};
  s.agent_listen = "127.0.0.1:0";
  EXPECT_THAT(Message(CheckSecurity("127.0.0.1:0", s)), HasSubstr("--agent-listen needs"));
  s = {};
  s.agent_ca_file = "ca.pem";
  EXPECT_THAT(Message(CheckSecurity("127.0.0.1:0", s)), HasSubstr("only with --agent-listen"));
}

TEST(CheckHttpSecurityTest, OffLoopbackNeedsTokensAndTlsUnlessInsecure) {
  SecurityOptions s;
  EXPECT_TRUE(CheckHttpSecurity("", s).ok());
  EXPECT_TRUE(CheckHttpSecurity("127.0.0.1:8080", s).ok());
  Result<std::vector<std::string>> r = CheckHttpSecurity("0.0.0.0:8080", s);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r), HasSubstr("refusing to serve HTTP on 0.0.0.0:8080"));
  EXPECT_THAT(Message(r), HasSubstr("--tokens"));

  s.tokens_file = "tokens";
  r = CheckHttpSecurity("0.0.0.0:8080", s);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r), HasSubstr("give --tls-cert and --tls-key"));

  s.tls_cert_file = "c.pem";
  s.tls_key_file = "k.pem";
  r = CheckHttpSecurity("0.0.0.0:8080", s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->empty());

  SecurityOptions insecure;
  insecure.insecure = true;
  r = CheckHttpSecurity("0.0.0.0:8080", insecure);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_THAT((*r)[1], HasSubstr("--insecure on HTTP 0.0.0.0:8080: no TLS"));
}

}  // namespace
}  // namespace longhaul::server
