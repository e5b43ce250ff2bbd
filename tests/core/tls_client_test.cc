// core/net's HTTP client over TLS, against a real TLS server on loopback (the tests' webhook
// receiver) with certificates from CAs made now by deploy/gen-certs.sh.
#include <gtest/gtest.h>

#include "core/net/http_client.h"
#include "core/net/url.h"
#include "tests/daemon/notify/webhook_receiver.h"
#include "tests/testing/test_util.h"

namespace longhaul::net {
namespace {

using longhaul::testing::RunCommand;
using longhaul::testing::SourceDir;
using longhaul::testing::TempDir;
using longhaul::testing::WebhookReceiver;

class HttpTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* ca : {"ca", "other"}) {
      auto r = RunCommand({SourceDir() + "/deploy/gen-certs.sh", certs_.Join(ca)});
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
  }
  HttpRequest Post(std::string body) {
    HttpRequest r;
    r.method = "POST";
    r.body = std::move(body);
    r.timeouts.connect_ms = 10'000;
    r.timeouts.total_ms = 10'000;
    return r;
  }
  TempDir certs_;
};

TEST_F(HttpTlsTest, ATrustedServerGetsTheRequestWithSni) {
  WebhookReceiver server(1, certs_.Join("ca/coordinator.crt"), certs_.Join("ca/coordinator.key"));
  Result<HttpUrl> url = ParseHttpUrl(server.url());
  ASSERT_TRUE(url.ok()) << url.status();
  ASSERT_TRUE(url->https) << server.url();
  HttpRequest r = Post("{\"a\":1}");
  r.target = url->RequestTarget();
  HttpClient::Options options{.ca_file = certs_.Join("ca/ca.crt")};
  Result<HttpResult> first = HttpFetch(*url, r, options);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->status(), 500);
  Result<HttpResult> second = HttpFetch(*url, r, options);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->status(), 200);
  auto got = server.requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].server_name, "localhost");
  EXPECT_EQ(got[1].target, "/hook");
  EXPECT_EQ(got[1].body, "{\"a\":1}");
}

TEST_F(HttpTlsTest, ACertificateFromAnotherCaFailsTheHandshakeAndSaysWhy) {
  WebhookReceiver stranger(0, certs_.Join("other/coordinator.crt"),
                           certs_.Join("other/coordinator.key"));
  HttpRequest r = Post("{}");
  r.target = "/hook";
  Result<HttpResult> res =
      HttpFetch(*ParseHttpUrl(stranger.url()), r, {.ca_file = certs_.Join("ca/ca.crt")});
  EXPECT_EQ(res.status().code(), absl::StatusCode::kUnavailable) << res.status();
  EXPECT_NE(res.status().message().find("TLS handshake with localhost:"), std::string::npos)
      << res.status();
  EXPECT_NE(res.status().message().find("certificate verify failed"), std::string::npos)
      << res.status();
  EXPECT_TRUE(stranger.requests().empty());
}

TEST_F(HttpTlsTest, TheCertificateMustNameTheHost) {
  // coordinator.crt names localhost and 127.0.0.1. "127.1" is 127.0.0.1 to the resolver
  // (inet_aton's short form), but a name, not an address, to the certificate check.
  WebhookReceiver server(0, certs_.Join("ca/coordinator.crt"), certs_.Join("ca/coordinator.key"));
  HttpRequest r = Post("{}");
  r.target = "/hook";
  std::string url = "https://127.1:" + std::to_string(server.port()) + "/hook";
  Result<HttpResult> res = HttpFetch(*ParseHttpUrl(url), r, {.ca_file = certs_.Join("ca/ca.crt")});
  EXPECT_EQ(res.status().code(), absl::StatusCode::kUnavailable) << res.status();
  EXPECT_NE(res.status().message().find("TLS handshake with 127.1:"), std::string::npos)
      << res.status();
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(HttpTlsTest, ACaFileThatCannotBeLoadedIsNamed) {
  HttpRequest r = Post("{}");
  std::string missing = certs_.Join("missing.crt");
  Result<HttpResult> res =
      HttpFetch(*ParseHttpUrl("https://localhost:1/x"), r, {.ca_file = missing});
  EXPECT_EQ(res.status().code(), absl::StatusCode::kFailedPrecondition) << res.status();
  EXPECT_NE(res.status().message().find("cannot load " + missing), std::string::npos)
      << res.status();
}

}  // namespace
}  // namespace longhaul::net
