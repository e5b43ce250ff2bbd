#include "daemon/http/host_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace longhaul::http {
namespace {

using ::testing::HasSubstr;

TEST(HostCheckTest, LoopbackNamesWithTheBoundPortAndTheListenHost) {
  Result<HostCheck> c = HostCheck::Create("10.1.2.3:0", 8443, /*tls=*/false, {});
  ASSERT_TRUE(c.ok()) << c.status();
  for (const char* ok :
       {"localhost:8443", "LocalHost:8443", "127.0.0.1:8443", "[::1]:8443", "10.1.2.3:8443"}) {
    EXPECT_TRUE(c->Allowed(ok)) << ok;
  }
  for (const char* bad :
       {"localhost", "localhost:80", "127.0.0.1:8444", "evil.example:8443", "10.1.2.3",
        "localhost.evil.example:8443", "", ":8443", "localhost:8443/x", "[::1"}) {
    EXPECT_FALSE(c->Allowed(bad)) << bad;
  }
}

TEST(HostCheckTest, NoPortMeansTheSchemesDefault) {
  Result<HostCheck> c = HostCheck::Create("127.0.0.1:443", 443, /*tls=*/true, {});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->Allowed("localhost"));
  EXPECT_TRUE(c->Allowed("localhost:443"));
  c = HostCheck::Create("127.0.0.1:443", 443, /*tls=*/false, {});
  EXPECT_FALSE(c->Allowed("localhost"));
}

TEST(HostCheckTest, ExtraNamesWithOrWithoutAPort) {
  Result<HostCheck> c = HostCheck::Create("0.0.0.0:8080", 8080, false,
                                          {"longhaul.example", "proxy.example:9000", "[fd00::1]"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->Allowed("longhaul.example"));
  EXPECT_TRUE(c->Allowed("LONGHAUL.example:443"));
  EXPECT_TRUE(c->Allowed("proxy.example:9000"));
  EXPECT_FALSE(c->Allowed("proxy.example:9001"));
  EXPECT_FALSE(c->Allowed("proxy.example"));
  EXPECT_TRUE(c->Allowed("[fd00::1]:8080"));
  EXPECT_FALSE(c->Allowed("0.0.0.0:8080"));  // not a name clients use
}

TEST(HostCheckTest, BadExtraNameIsAnErrorNamingTheFlag) {
  Result<HostCheck> c = HostCheck::Create("127.0.0.1:0", 8080, false, {"ok.example", "a b"});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("--http-host 'a b'"));
  c = HostCheck::Create("127.0.0.1:0", 8080, false, {"x.example:99999"});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HostCheckTest, RefusalNamesTheHostAndTheFlag) {
  Result<HostCheck> c = HostCheck::Create("127.0.0.1:0", 8080, false, {});
  ASSERT_TRUE(c.ok());
  std::optional<Response> r = c->Check("evil.example:8080", true, true);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 421);
  EXPECT_THAT(r->body, HasSubstr("Host 'evil.example:8080'"));
  EXPECT_THAT(r->body, HasSubstr("--http-host 'evil.example:8080'"));
  r = c->Check("", /*http11=*/true, /*present=*/false);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 400);
  EXPECT_FALSE(c->Check("", /*http11=*/false, /*present=*/false).has_value());
  EXPECT_FALSE(c->Check("localhost:8080", true, true).has_value());
}

}  // namespace
}  // namespace longhaul::http
