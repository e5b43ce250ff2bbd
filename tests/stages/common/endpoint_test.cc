#include "stages/common/endpoint.h"

#include <gtest/gtest.h>

namespace longhaul::stages {
namespace {

TEST(EndpointTest, ParsesHostPortAndDropsV1) {
  auto u = ParseEndpoint("http://10.0.0.5:30000/v1/");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->host, "10.0.0.5");
  EXPECT_EQ(u->port, 30000);
  EXPECT_EQ(u->path, "");
  EXPECT_EQ(u->Origin(), "http://10.0.0.5:30000");
  EXPECT_EQ(u->Target("/metrics"), "/metrics");
}

TEST(EndpointTest, KeepsOtherBasePathsAndDefaultsPort) {
  auto u = ParseEndpoint("http://gateway/engines/a/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->Target("/v1/completions"), "/engines/a/v1/completions");
}

TEST(EndpointTest, Ipv6Literal) {
  auto u = ParseEndpoint("http://[::1]:8000");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->Origin(), "http://[::1]:8000");
}

TEST(EndpointTest, RejectsWhatAStageCannotServe) {
  EXPECT_EQ(ParseEndpoint("https://x:1").status().message(),
            "endpoint 'https://x:1': https is not supported; use http://");
  EXPECT_EQ(ParseEndpoint("x:1").status().message(), "endpoint 'x:1': expected http://HOST:PORT");
  EXPECT_EQ(ParseEndpoint("http://:80").status().message(), "endpoint 'http://:80': missing host");
  EXPECT_EQ(ParseEndpoint("http://h:99999").status().message(),
            "endpoint 'http://h:99999': port '99999' is not a number from 1 to 65535");
  EXPECT_EQ(ParseEndpoint("http://h:1/?q").status().message(),
            "endpoint 'http://h:1/?q': query strings are not supported");
}

}  // namespace
}  // namespace longhaul::stages
