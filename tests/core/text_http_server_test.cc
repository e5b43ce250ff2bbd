// TextHttpServer over real loopback TCP: registered paths, the answers for everything else,
// and the bound address of port 0.
#include "core/net/text_http_server.h"

#include <gtest/gtest.h>

#include <atomic>

#include "core/net/listen_address.h"
#include "tests/http/http_client.h"

namespace longhaul {
namespace {

using testing::HttpRequest;
using testing::HttpResult;
using testing::RawConnection;

class TextHttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Handle("/metrics", [this] {
      ++calls_;
      return TextResponse{200, "text/plain; version=0.0.4", "a 1\n"};
    });
    server_.Handle("/busy", [] { return TextResponse{503, "text/plain", "not now"}; });
    Result<std::string> addr = server_.Start("127.0.0.1:0");
    ASSERT_TRUE(addr.ok()) << addr.status();
    addr_ = *addr;
  }

  TextHttpServer server_;
  std::string addr_;
  std::atomic<int> calls_{0};
};

TEST_F(TextHttpServerTest, AnswersARegisteredPathWithItsHandlersText) {
  EXPECT_NE(addr_.find("127.0.0.1:"), std::string::npos) << addr_;
  EXPECT_NE(addr_, "127.0.0.1:0");
  Result<HttpResult> r = HttpRequest(addr_, "GET", "/metrics?x=1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "a 1\n");
  EXPECT_EQ(r->Header("content-type"), "text/plain; version=0.0.4");
  EXPECT_EQ(r->Header("connection"), "close");
  Result<HttpResult> busy = HttpRequest(addr_, "GET", "/busy");
  ASSERT_TRUE(busy.ok()) << busy.status();
  EXPECT_EQ(busy->status, 503);
  EXPECT_EQ(busy->body, "not now");
}

TEST_F(TextHttpServerTest, HeadSendsTheLengthWithoutTheBody) {
  auto conn = RawConnection::Open(addr_);
  ASSERT_TRUE(conn.ok()) << conn.status();
  ASSERT_TRUE((*conn)->Write("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n").ok());
  Result<std::string> answer = (*conn)->ReadUntilClose(10'000);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << *answer;
  EXPECT_NE(answer->find("Content-Length: 4\r\n"), std::string::npos) << *answer;
  EXPECT_EQ(answer->substr(answer->size() - 4), "\r\n\r\n") << *answer;  // no body
}

TEST_F(TextHttpServerTest, RefusesOtherPathsMethodsAndBodies) {
  Result<HttpResult> missing = HttpRequest(addr_, "GET", "/api/v1/runs");
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->status, 404);
  Result<HttpResult> post = HttpRequest(addr_, "POST", "/metrics");
  ASSERT_TRUE(post.ok()) << post.status();
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->Header("allow"), "GET, HEAD");
  Result<HttpResult> body = HttpRequest(addr_, "GET", "/metrics", "payload");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(body->status, 400);
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(TextHttpServerTest, ClosesAConnectionWhoseHeaderIsTooLarge) {
  auto conn = RawConnection::Open(addr_);
  ASSERT_TRUE(conn.ok()) << conn.status();
  std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(16 * 1024, 'a');
  (void)(*conn)->Write(request + "\r\n\r\n");  // the server may close before all of it is read
  Result<std::string> answer = (*conn)->ReadUntilClose(10'000);
  // Closed (or reset) without an answer, and the handler never ran.
  if (answer.ok()) {
    EXPECT_EQ(*answer, "");
  }
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(TextHttpServerTest, StopIsIdempotentAndClosesTheListener) {
  server_.Stop();
  server_.Stop();
  EXPECT_FALSE(HttpRequest(addr_, "GET", "/metrics", "", {}, 2'000).ok());
}

TEST(TextHttpServerStartTest, NamesABadOrBusyAddress) {
  TextHttpServer bad;
  Result<std::string> r = bad.Start("example.org:80");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("'example.org' is not an IP address"), std::string::npos)
      << r.status();

  TextHttpServer first;
  Result<std::string> addr = first.Start("127.0.0.1:0");
  ASSERT_TRUE(addr.ok()) << addr.status();
  TextHttpServer second;
  Result<std::string> busy = second.Start(*addr);
  ASSERT_FALSE(busy.ok());
  EXPECT_TRUE(absl::IsUnavailable(busy.status())) << busy.status();
  EXPECT_NE(busy.status().message().find(*addr), std::string::npos) << busy.status();
}

TEST(ListenAddressTest, ReadsTheFormsOfAListeningAddress) {
  auto v4 = ParseListenAddress("127.0.0.1:9464");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->port(), 9464);
  auto local = ParseListenAddress("localhost:0");
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_TRUE(local->address().is_loopback());
  auto v6 = ParseListenAddress("[::1]:80");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(DialableAddress(*v6), "[::1]:80");
  auto any = ParseListenAddress("0.0.0.0:81");
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ(DialableAddress(*any), "127.0.0.1:81");
  EXPECT_FALSE(ParseListenAddress("127.0.0.1").ok());
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:65536").ok());
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:x").ok());
}

}  // namespace
}  // namespace longhaul
