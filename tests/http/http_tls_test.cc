// longhauld's HTTP listener over TLS, with the certificates of deploy/gen-certs.sh: with
// --tls-cert/--tls-key it speaks only HTTPS (watch streams included), which lets it listen off
// loopback with tokens; a plaintext request or a client that does not trust the certificate
// fails cleanly, and the listener keeps serving.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"
#include "tests/integration/tokens.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr char kHello[] =
    "name: hello\n"
    "stages:\n"
    "  greet:\n"
    "    run: [lh-testjob, --print, hello, --sleep, '0.3']\n";

void GenCerts(const std::string& dir) {
  CommandResult r = RunCommand({SourceDir() + "/deploy/gen-certs.sh", dir, "--agent", "n0"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
}

class HttpTlsTest : public ClusterTest {
 protected:
  // A cluster whose longhauld has a certificate and tokens; its HTTP listener on `http`.
  void Start(const std::string& http, std::vector<std::string> more_flags = {}) {
    ASSERT_NO_FATAL_FAILURE(GenCerts(certs_.Join("ca")));
    ca_ = certs_.Join("ca/ca.crt");
    tokens_ = MakeTokens(dir_, {{"operator", "olga"}});
    ClusterOptions o;
    o.coordinator_flags = {"--tls-cert", certs_.Join("ca/coordinator.crt"),
                           "--tls-key",  certs_.Join("ca/coordinator.key"),
                           "--tokens",   tokens_.file,
                           "--http",     http};
    o.coordinator_flags.insert(o.coordinator_flags.end(), more_flags.begin(), more_flags.end());
    o.client_tls_ca_file = ca_;
    o.agent_flags = {"--tls-cert", certs_.Join("ca/agent-n0.crt"),
                     "--tls-key",  certs_.Join("ca/agent-n0.key"),
                     "--tls-ca",   ca_};
    o.client_token = tokens_.by_name["olga"];
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
    ASSERT_FALSE(cluster().http_address().empty());
  }
  HttpEndpoint Https() { return HttpEndpoint(cluster().http_address(), ca_, "localhost"); }
  std::map<std::string, std::string> Bearer() {
    return {{"Authorization", "Bearer " + tokens_.by_name["olga"]}};
  }
  void ExpectRunsOverHttps() {
    Result<HttpResult> r = HttpRequest(Https(), "GET", "/api/v1/runs", "", Bearer());
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_TRUE(json::parse(r->body, nullptr, false).contains("runs")) << r->body;
  }

  TempDir certs_, dir_;
  std::string ca_;
  Tokens tokens_;
};

TEST_F(HttpTlsTest, RunsOverHttpsWithATokenAndNotWithout) {
  ASSERT_NO_FATAL_FAILURE(Start("127.0.0.1:0"));
  ASSERT_NO_FATAL_FAILURE(ExpectRunsOverHttps());
  Result<HttpResult> none = HttpRequest(Https(), "GET", "/api/v1/runs");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->status, 401) << none->body;
  EXPECT_THAT(ReadTextFile(cluster().dir().Join("logs/longhauld.log")),
              HasSubstr("UI and HTTP API on https://"));
  // The browser's login cookie, set over HTTPS, is never sent back in plaintext.
  Result<HttpResult> login =
      HttpRequest(Https(), "POST", "/api/v1/login",
                  json{{"token", tokens_.by_name.begin()->second}}.dump());
  ASSERT_TRUE(login.ok()) << login.status();
  EXPECT_EQ(login->status, 204) << login->body;
  EXPECT_THAT(login->Header("set-cookie"), HasSubstr("; HttpOnly; SameSite=Strict; Secure"));
}

TEST_F(HttpTlsTest, PlaintextOnTheTlsPortIsAnsweredWithTheHttpsUrlAndServingGoesOn) {
  ASSERT_NO_FATAL_FAILURE(Start("127.0.0.1:0"));
  auto raw = RawConnection::Open(cluster().http_address());
  ASSERT_TRUE(raw.ok()) << raw.status();
  ASSERT_TRUE((*raw)
                  ->Write(StrCat("GET /api/v1/runs HTTP/1.1\r\nHost: ", cluster().http_address(),
                                 "\r\n\r\n"))
                  .ok());
  Result<std::string> answer = (*raw)->ReadUntilClose(10'000);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_THAT(*answer, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(*answer, HasSubstr(StrCat("use https://", cluster().http_address(), "/api/v1/runs")));

  // The plaintext client API of this test's client library, too: no answer, no hang.
  Result<HttpResult> plain = HttpRequest(cluster().http_address(), "GET", "/api/v1/runs");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->status, 400);
  ASSERT_NO_FATAL_FAILURE(ExpectRunsOverHttps());
}

TEST_F(HttpTlsTest, AClientThatDoesNotTrustTheCertificateFailsTheHandshake) {
  ASSERT_NO_FATAL_FAILURE(Start("127.0.0.1:0"));
  TempDir other;
  ASSERT_NO_FATAL_FAILURE(GenCerts(other.Join("ca")));
  Result<HttpResult> r =
      HttpRequest(HttpEndpoint(cluster().http_address(), other.Join("ca/ca.crt"), "localhost"),
                  "GET", "/api/v1/runs", "", Bearer());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("TLS handshake"));
  // A name the certificate does not hold fails as well.
  r = HttpRequest(HttpEndpoint(cluster().http_address(), ca_, "elsewhere.example"), "GET",
                  "/api/v1/runs", "", Bearer());
  ASSERT_FALSE(r.ok());
  ASSERT_NO_FATAL_FAILURE(ExpectRunsOverHttps());
}

TEST_F(HttpTlsTest, WatchStreamOverHttpsSeesTheRunToItsEnd) {
  ASSERT_NO_FATAL_FAILURE(Start("127.0.0.1:0"));
  Result<int64_t> id = cluster().Submit(kHello);
  ASSERT_TRUE(id.ok()) << id.status();
  auto stream =
      SseClient::Open(Https(), StrCat("/api/v1/runs/", *id, "/watch"), "", 10'000, Bearer());
  ASSERT_TRUE(stream.ok()) << stream.status();
  EXPECT_EQ((*stream)->headers().at("x-frame-options"), "DENY");
  Result<SseEvent> ev = (*stream)->Next();
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->event, "snapshot");
  for (;;) {
    ev = (*stream)->Next(30'000);
    ASSERT_TRUE(ev.ok()) << ev.status();
    if (ev->event == "end") break;
  }
  EXPECT_EQ((*stream)->Next().status().code(), absl::StatusCode::kOutOfRange);
}

TEST_F(HttpTlsTest, OffLoopbackWithTokensAndTlsIsServed) {
  ASSERT_NO_FATAL_FAILURE(Start("0.0.0.0:0"));
  ASSERT_NO_FATAL_FAILURE(ExpectRunsOverHttps());
}

TEST_F(HttpTlsTest, ConnectionsThatNeverFinishTheHandshakeAreClosedByTheHeaderTimeout) {
  ASSERT_NO_FATAL_FAILURE(Start("127.0.0.1:0", {"--http-header-timeout", "1s"}));
  auto silent = RawConnection::Open(cluster().http_address());
  ASSERT_TRUE(silent.ok()) << silent.status();
  auto half = RawConnection::Open(cluster().http_address());
  ASSERT_TRUE(half.ok()) << half.status();
  // The first bytes of a TLS record header, then nothing.
  ASSERT_TRUE((*half)->Write(std::string("\x16\x03\x01", 3)).ok());
  Result<std::string> r = (*silent)->ReadUntilClose(20'000);
  EXPECT_TRUE(r.ok()) << r.status();
  r = (*half)->ReadUntilClose(20'000);
  EXPECT_TRUE(r.ok()) << r.status();
  ASSERT_NO_FATAL_FAILURE(ExpectRunsOverHttps());
}

// Plaintext off loopback is refused at start, with the flags that would make it safe.
TEST(HttpTlsStartTest, OffLoopbackWithoutTlsIsRefusedUnlessInsecure) {
  TempDir dir;
  Tokens tokens = MakeTokens(dir, {{"viewer", "vera"}});
  std::vector<std::string> argv = {BinPath("longhauld"), "--state-dir", dir.Join("state"),
                                   "--listen",           "127.0.0.1:0", "--http",
                                   "0.0.0.0:0",          "--tokens",    tokens.file};
  CommandResult r = RunCommand(argv, {}, 30'000);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("refusing to serve HTTP on 0.0.0.0:0"));
  EXPECT_THAT(r.err, HasSubstr("give --tls-cert and --tls-key"));
}

}  // namespace
}  // namespace longhaul::testing
