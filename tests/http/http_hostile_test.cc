// longhauld's HTTP listener against clients that misbehave, on a real cluster: Host names
// that are not the server's (DNS rebinding), huge bodies and headers, slowloris connections,
// more connections than the cap; and the security headers on every kind of answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr char kHello[] =
    "name: hello\n"
    "stages:\n"
    "  greet:\n"
    "    run: [lh-testjob, --print, hello]\n";

class HttpHostileTest : public ClusterTest {
 protected:
  void Start(std::vector<std::string> flags = {}) {
    ClusterOptions o;
    o.coordinator_flags = std::move(flags);
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
    addr_ = cluster().http_address();
    ASSERT_FALSE(addr_.empty());
    port_ = addr_.substr(addr_.rfind(':') + 1);
  }
  Result<HttpResult> GetWithHost(const std::string& host) {
    return HttpRequest(addr_, "GET", "/api/v1/runs", "", {{"Host", host}});
  }
  // Opens `n` connections that each sent part of a request header.
  std::vector<std::unique_ptr<RawConnection>> Partial(int n) {
    std::vector<std::unique_ptr<RawConnection>> out;
    for (int i = 0; i < n; ++i) {
      auto c = RawConnection::Open(addr_);
      EXPECT_TRUE(c.ok()) << "connection " << i << ": " << c.status();
      if (!c.ok()) break;
      EXPECT_TRUE((*c)->Write("GET /api/v1/runs HTTP/1.1\r\nHost: localh").ok());
      out.push_back(std::move(*c));
    }
    return out;
  }
  static int64_t MsLeft(Clock::time_point deadline) {
    return std::max<int64_t>(
        1, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
  }

  std::string addr_, port_;
};

void ExpectSecurityHeaders(const std::map<std::string, std::string>& h, const std::string& what) {
  auto get = [&](const char* name) {
    auto it = h.find(name);
    return it == h.end() ? std::string("(absent)") : it->second;
  };
  EXPECT_THAT(get("content-security-policy"), HasSubstr("default-src 'self'")) << what;
  EXPECT_THAT(get("content-security-policy"), HasSubstr("frame-ancestors 'none'")) << what;
  EXPECT_THAT(get("content-security-policy"), HasSubstr("object-src 'none'")) << what;
  EXPECT_EQ(get("x-content-type-options"), "nosniff") << what;
  EXPECT_EQ(get("x-frame-options"), "DENY") << what;
  EXPECT_EQ(get("referrer-policy"), "no-referrer") << what;
}

TEST_F(HttpHostileTest, HostMustNameThisServer) {
  ASSERT_NO_FATAL_FAILURE(
      Start({"--http-host", "longhaul.example", "--http-host", "proxy.example:9000"}));
  for (std::string ok : {"localhost:" + port_, "127.0.0.1:" + port_, "[::1]:" + port_,
                         std::string("longhaul.example"), std::string("longhaul.example:443"),
                         std::string("proxy.example:9000")}) {
    Result<HttpResult> r = GetWithHost(ok);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 200) << ok << ": " << r->body;
  }
  for (std::string bad : {"evil.example:" + port_, std::string("localhost:1"),
                          std::string("proxy.example"), "localhost.evil.example:" + port_}) {
    Result<HttpResult> r = GetWithHost(bad);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 421) << bad << ": " << r->body;
    EXPECT_THAT(r->body, HasSubstr("Host '" + bad + "'"));
    EXPECT_THAT(r->body, HasSubstr("--http-host"));
  }
  // The watch stream is checked too.
  Result<int64_t> id = cluster().Submit(kHello);
  ASSERT_TRUE(id.ok()) << id.status();
  Result<HttpResult> watch = HttpRequest(addr_, "GET", StrCat("/api/v1/runs/", *id, "/watch"), "",
                                         {{"Host", "evil.example:" + port_}});
  ASSERT_TRUE(watch.ok()) << watch.status();
  EXPECT_EQ(watch->status, 421);
}

TEST_F(HttpHostileTest, MissingHostIs400OnHttp11Only) {
  ASSERT_NO_FATAL_FAILURE(Start());
  auto c = RawConnection::Open(addr_);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->Write("GET /api/v1/runs HTTP/1.1\r\n\r\n").ok());
  Result<std::string> answer = (*c)->ReadUntilClose(10'000);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_THAT(*answer, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(*answer, HasSubstr("needs a Host header"));

  c = RawConnection::Open(addr_);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->Write("GET /api/v1/runs HTTP/1.0\r\n\r\n").ok());
  answer = (*c)->ReadUntilClose(10'000);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_THAT(*answer, HasSubstr(" 200 "));
}

TEST_F(HttpHostileTest, EveryAnswerCarriesTheSecurityHeaders) {
  ASSERT_NO_FATAL_FAILURE(Start());
  Result<HttpResult> api = HttpGet(addr_, "/api/v1/runs");
  ASSERT_TRUE(api.ok()) << api.status();
  ExpectSecurityHeaders(api->headers, "API");
  EXPECT_EQ(api->Header("cache-control"), "no-store");
  Result<HttpResult> ui = HttpGet(addr_, "/");
  ASSERT_TRUE(ui.ok()) << ui.status();
  EXPECT_EQ(ui->status, 200);
  ExpectSecurityHeaders(ui->headers, "UI");
  Result<HttpResult> missing = HttpGet(addr_, "/api/v1/runs/4242");
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->status, 404);
  ExpectSecurityHeaders(missing->headers, "404");
  EXPECT_EQ(missing->Header("cache-control"), "no-store");
  Result<HttpResult> refused = GetWithHost("evil.example");
  ASSERT_TRUE(refused.ok()) << refused.status();
  ExpectSecurityHeaders(refused->headers, "421");

  Result<int64_t> id = cluster().Submit(kHello);
  ASSERT_TRUE(id.ok()) << id.status();
  auto stream = SseClient::Open(addr_, StrCat("/api/v1/runs/", *id, "/watch"));
  ASSERT_TRUE(stream.ok()) << stream.status();
  ExpectSecurityHeaders((*stream)->headers(), "SSE");
  EXPECT_EQ((*stream)->headers().at("cache-control"), "no-store");
}

TEST_F(HttpHostileTest, HugeBodyIsAnswered413AndTheServerGoesOn) {
  ASSERT_NO_FATAL_FAILURE(Start());
  // The client writes all 100 MB before it reads: the server must answer, then take in what
  // follows rather than reset the connection under the client's write.
  Result<HttpResult> r =
      HttpRequest(addr_, "POST", "/api/v1/runs", std::string(100 << 20, 'x'), {}, 60'000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 413) << r->body;
  EXPECT_THAT(r->body, HasSubstr("request body over"));
  EXPECT_EQ(r->Header("connection"), "close");
  Result<HttpResult> after = HttpGet(addr_, "/api/v1/runs");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->status, 200);
  EXPECT_EQ(cluster().Query("SELECT count(*) FROM runs").value_or("?"), "0");
}

TEST_F(HttpHostileTest, HugeHeaderIsAnswered431) {
  ASSERT_NO_FATAL_FAILURE(Start());
  auto c = RawConnection::Open(addr_);
  ASSERT_TRUE(c.ok()) << c.status();
  Status wrote = (*c)->Write(StrCat("GET /api/v1/runs HTTP/1.1\r\nHost: ", addr_,
                                    "\r\nX-Big: ", std::string(10 << 20, 'y'), "\r\n\r\n"),
                             60'000);
  EXPECT_TRUE(wrote.ok()) << wrote;
  Result<std::string> answer = (*c)->ReadUntilClose(30'000);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_THAT(*answer, HasSubstr("HTTP/1.1 431"));
  EXPECT_THAT(*answer, HasSubstr("request header over"));
  Result<HttpResult> after = HttpGet(addr_, "/api/v1/runs");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->status, 200);
}

TEST_F(HttpHostileTest, SlowlorisConnectionsDoNotStopOthers) {
  // A header timeout far longer than the test: the partial connections stay open.
  ASSERT_NO_FATAL_FAILURE(Start({"--http-header-timeout", "10m"}));
  std::vector<std::unique_ptr<RawConnection>> partial = Partial(300);
  ASSERT_EQ(partial.size(), 300u);
  Result<HttpResult> r = HttpGet(addr_, "/api/v1/runs");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200) << r->body;
  // They were still open while it answered: the last one finishes its request and is served.
  ASSERT_TRUE(partial.back()->Write("ost:" + port_ + "\r\nConnection: close\r\n\r\n").ok());
  Result<std::string> last = partial.back()->ReadUntilClose(10'000);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_THAT(*last, HasSubstr("HTTP/1.1 200"));
}

TEST_F(HttpHostileTest, HeaderTimeoutClosesSlowlorisConnections) {
  ASSERT_NO_FATAL_FAILURE(Start({"--http-header-timeout", "1s"}));
  std::vector<std::unique_ptr<RawConnection>> partial = Partial(300);
  ASSERT_EQ(partial.size(), 300u);
  // Each is closed by the server (EOF, no answer owed) well within this deadline.
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
  int closed = 0;
  for (auto& c : partial) {
    Result<std::string> r = c->ReadUntilClose(MsLeft(deadline));
    EXPECT_TRUE(r.ok()) << "connection " << closed << ": " << r.status();
    if (!r.ok()) break;
    ++closed;
  }
  EXPECT_EQ(closed, 300);
  Result<HttpResult> r = HttpGet(addr_, "/api/v1/runs");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpHostileTest, PastTheConnectionCapANewConnectionGets503) {
  ASSERT_NO_FATAL_FAILURE(Start({"--http-max-connections", "20", "--http-header-timeout", "10m"}));
  std::vector<std::unique_ptr<RawConnection>> partial = Partial(20);
  ASSERT_EQ(partial.size(), 20u);
  Result<HttpResult> full = HttpGet(addr_, "/api/v1/runs");
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->status, 503) << full->body;
  EXPECT_THAT(full->body, HasSubstr("--http-max-connections"));
  // One closes: a connection is served again once the server has seen it go.
  partial.pop_back();
  Result<HttpResult> again;
  EXPECT_TRUE(WaitFor(
      [&] {
        again = HttpGet(addr_, "/api/v1/runs");
        return again.ok() && again->status == 200;
      },
      20'000))
      << (again.ok() ? again->body : again.status().ToString());
}

}  // namespace
}  // namespace longhaul::testing
