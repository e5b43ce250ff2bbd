#include "stages/common/url.h"

#include <gtest/gtest.h>

namespace longhaul::stages {
namespace {

TEST(UrlTest, ParsesHostPortAndDropsV1) {
  auto u = ParseHttpUrl("http://10.0.0.5:30000/v1/");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->host, "10.0.0.5");
  EXPECT_EQ(u->port, 30000);
  EXPECT_EQ(u->base, "");
  EXPECT_EQ(u->Origin(), "http://10.0.0.5:30000");
  EXPECT_EQ(u->Target("/metrics"), "/metrics");
}

TEST(UrlTest, KeepsOtherBasePathsAndDefaultsPort) {
  auto u = ParseHttpUrl("http://gateway/engines/a");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->Target("/v1/completions"), "/engines/a/v1/completions");
}

TEST(UrlTest, Ipv6Literal) {
  auto u = ParseHttpUrl("http://[::1]:8000");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->Origin(), "http://[::1]:8000");
}

TEST(UrlTest, RejectsWhatItCannotServe) {
  EXPECT_NE(ParseHttpUrl("https://x:1").status().message().find("https is not supported"),
            std::string::npos);
  EXPECT_FALSE(ParseHttpUrl("x:1").ok());
  EXPECT_FALSE(ParseHttpUrl("http://:80").ok());
  EXPECT_NE(ParseHttpUrl("http://h:99999").status().message().find("bad port '99999'"),
            std::string::npos);
  EXPECT_FALSE(ParseHttpUrl("http://h:1/?q").ok());
}

}  // namespace
}  // namespace longhaul::stages
