#include "core/net/url.h"

#include <gtest/gtest.h>

namespace longhaul::net {
namespace {

std::string ErrorOf(std::string_view url, const UrlRules& rules = {}) {
  Result<HttpUrl> u = ParseHttpUrl(url, rules);
  EXPECT_FALSE(u.ok()) << url;
  EXPECT_EQ(u.status().code(), absl::StatusCode::kInvalidArgument) << url;
  return std::string(u.status().message());
}

TEST(UrlTest, SchemesGiveTheirDefaultPorts) {
  Result<HttpUrl> u = ParseHttpUrl("http://node5");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_FALSE(u->https);
  EXPECT_EQ(u->host, "node5");
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->path, "");
  EXPECT_EQ(u->RequestTarget(), "/");
  EXPECT_EQ(u->Origin(), "http://node5:80");

  u = ParseHttpUrl("https://hooks.example.com/services/T0/B1?x=1");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_TRUE(u->https);
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->path, "/services/T0/B1?x=1");
  EXPECT_EQ(u->RequestTarget(), "/services/T0/B1?x=1");
  EXPECT_EQ(u->Origin(), "https://hooks.example.com:443");
}

TEST(UrlTest, ExplicitPortsFromOneTo65535) {
  EXPECT_EQ(ParseHttpUrl("http://h:1")->port, 1);
  EXPECT_EQ(ParseHttpUrl("https://h:65535/x")->port, 65535);
  EXPECT_EQ(ParseHttpUrl("  http://10.0.0.5:30000/v1/  ")->path, "/v1/");
  EXPECT_EQ(ErrorOf("http://h:0"), "URL 'http://h:0': port '0' is not a number from 1 to 65535");
  EXPECT_EQ(ErrorOf("http://h:65536"),
            "URL 'http://h:65536': port '65536' is not a number from 1 to 65535");
  EXPECT_EQ(ErrorOf("http://h:/x"), "URL 'http://h:/x': port '' is not a number from 1 to 65535");
  EXPECT_EQ(ErrorOf("http://h:8o"), "URL 'http://h:8o': port '8o' is not a number from 1 to 65535");
  EXPECT_EQ(ErrorOf("http://h:-1"), "URL 'http://h:-1': port '-1' is not a number from 1 to 65535");
}

TEST(UrlTest, Ipv6LiteralsAreBracketed) {
  Result<HttpUrl> u = ParseHttpUrl("https://[::1]:8443");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 8443);
  EXPECT_EQ(u->Origin(), "https://[::1]:8443");
  u = ParseHttpUrl("http://[fe80::1:2]/p");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->host, "fe80::1:2");
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->path, "/p");

  EXPECT_EQ(ErrorOf("http://[::1:80"), "URL 'http://[::1:80': unclosed '[' in the host");
  EXPECT_EQ(ErrorOf("http://[::1]80"), "URL 'http://[::1]80': expected ':PORT' after ']'");
  EXPECT_EQ(ErrorOf("http://::1:80"),
            "URL 'http://::1:80': an IPv6 address must be in brackets: [::1]:PORT");
  EXPECT_EQ(ErrorOf("http://[node5]:80"),
            "URL 'http://[node5]:80': 'node5' is not an IPv6 address");
  EXPECT_EQ(ErrorOf("http://[]:80"), "URL 'http://[]:80': missing host");
}

TEST(UrlTest, UserInfoIsRefusedNotSent) {
  EXPECT_EQ(ErrorOf("https://user:secret@hooks.example.com/x"),
            "URL 'https://user:secret@hooks.example.com/x': user info is not supported");
  // An '@' after the host is part of the path, not user info.
  EXPECT_EQ(ParseHttpUrl("http://h/a@b")->path, "/a@b");
}

TEST(UrlTest, BadInputNamesTheUrlAndTheProblem) {
  UrlRules webhook{.what = "webhook"};
  EXPECT_EQ(ErrorOf("ftp://h/x", webhook),
            "webhook 'ftp://h/x': expected http://HOST[:PORT] or https://HOST[:PORT]");
  EXPECT_EQ(ErrorOf("https:///x", webhook), "webhook 'https:///x': missing host");
  EXPECT_EQ(ErrorOf("http://", webhook), "webhook 'http://': missing host");
  EXPECT_EQ(ErrorOf("http://h/a b", webhook),
            "webhook 'http://h/a b': a space or control character in the URL");
  EXPECT_EQ(ErrorOf("http://h/a\r\nHost: evil", webhook),
            "webhook 'http://h/a\r\nHost: evil': a space or control character in the URL");
  EXPECT_EQ(ErrorOf("http://h/a#top", webhook),
            "webhook 'http://h/a#top': fragments are not supported");
}

TEST(UrlTest, RulesNarrowWhatIsAccepted) {
  UrlRules plain{.what = "endpoint", .allow_https = false, .allow_query = false};
  EXPECT_EQ(ErrorOf("https://h", plain),
            "endpoint 'https://h': https is not supported; use http://");
  EXPECT_EQ(ErrorOf("h:80", plain), "endpoint 'h:80': expected http://HOST:PORT");
  EXPECT_EQ(ErrorOf("http://h/x?q=1", plain),
            "endpoint 'http://h/x?q=1': query strings are not supported");
  // A query straight after the host gets the root path.
  EXPECT_EQ(ParseHttpUrl("http://h?q=1")->RequestTarget(), "/?q=1");
}

}  // namespace
}  // namespace longhaul::net
