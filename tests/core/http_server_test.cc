// core/net's HttpServer over real loopback TCP, on an io_context thread of the test's own:
// keep-alive with a streamed answer, HEAD, the read timeout, the connection cap and the
// caller's words for a bad request. (Its plain-text use is text_http_server_test; the
// refengine's, refengine_server_test.)
#include "core/net/http_server.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>
#include <thread>

#include "tests/http/http_client.h"

namespace longhaul::net {
namespace {

using longhaul::testing::RawConnection;

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpServer::Options options) {
    server_.emplace(
        io_,
        [](ServerRequest req, std::shared_ptr<HttpResponder> resp) {
          if (req.path == "/stream") {
            resp->StartStream(200, "text/event-stream");
            resp->Write("data: a\n\n");
            resp->Write("data: " + req.query + "\n\n");
            return resp->End();
          }
          resp->Send(200, "text/plain", "got " + req.method + " " + req.body, {{"X-Seen", "1"}});
        },
        std::move(options));
    Result<std::string> addr = server_->Listen("127.0.0.1:0");
    ASSERT_TRUE(addr.ok()) << addr.status();
    addr_ = *addr;
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    io_.stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();  // no thread runs io_ any more
  }
  std::unique_ptr<RawConnection> Connect() {
    auto conn = RawConnection::Open(addr_);
    EXPECT_TRUE(conn.ok()) << conn.status();
    return conn.ok() ? std::move(*conn) : nullptr;
  }

  boost::asio::io_context io_{1};
  std::optional<HttpServer> server_;
  std::thread thread_;
  std::string addr_;
};

TEST_F(HttpServerTest, KeepAliveServesAWholeThenAStreamedAnswerOnOneConnection) {
  ASSERT_NO_FATAL_FAILURE(Start({}));
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Write("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi").ok());
  Result<std::string> first = conn->ReadUntil("got POST hi");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << *first;
  EXPECT_NE(first->find("X-Seen: 1\r\n"), std::string::npos) << *first;
  EXPECT_NE(first->find("Connection: keep-alive\r\n"), std::string::npos) << *first;
  ASSERT_TRUE(conn->Write("GET /stream?b HTTP/1.1\r\nHost: h\r\n\r\n").ok());
  Result<std::string> second = conn->ReadUntil("0\r\n\r\n");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(second->find("Transfer-Encoding: chunked\r\n"), std::string::npos) << *second;
  EXPECT_NE(second->find("9\r\ndata: a\n\n\r\n9\r\ndata: b\n\n\r\n"), std::string::npos) << *second;
}

TEST_F(HttpServerTest, HeadGetsTheLengthOfTheBodyButNotTheBody) {
  ASSERT_NO_FATAL_FAILURE(Start({.keep_alive = false}));
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Write("HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n").ok());
  Result<std::string> answer = conn->ReadUntilClose(10'000);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_NE(answer->find("Content-Length: 9\r\n"), std::string::npos) << *answer;  // "got HEAD "
  EXPECT_NE(answer->find("Connection: close\r\n"), std::string::npos) << *answer;
  EXPECT_EQ(answer->substr(answer->size() - 4), "\r\n\r\n") << *answer;
}

TEST_F(HttpServerTest, AConnectionThatSendsNoRequestIsClosedAfterTheReadTimeout) {
  ASSERT_NO_FATAL_FAILURE(Start({.header_timeout = std::chrono::milliseconds(200)}));
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Write("GET /x HTTP/1.1\r\n").ok());  // and nothing more
  auto start = std::chrono::steady_clock::now();
  Result<std::string> answer = conn->ReadUntilClose(10'000);
  if (answer.ok()) EXPECT_EQ(*answer, "");  // closed without an answer (or reset)
  EXPECT_FALSE(absl::IsDeadlineExceeded(answer.status())) << answer.status();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
}

TEST_F(HttpServerTest, PastTheCapANewConnectionIsClosedAtOnce) {
  ASSERT_NO_FATAL_FAILURE(Start({.max_connections = 1}));
  auto held = Connect();
  ASSERT_NE(held, nullptr);
  ASSERT_TRUE(held->Write("GET /x HTTP/1.1\r\nHost: h\r\n\r\n").ok());
  ASSERT_TRUE(held->ReadUntil("got GET").ok());  // accepted and kept alive: one open
  auto refused = Connect();
  ASSERT_NE(refused, nullptr);
  (void)refused->Write("GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
  Result<std::string> answer = refused->ReadUntilClose(10'000);
  if (answer.ok()) EXPECT_EQ(*answer, "");
  EXPECT_FALSE(absl::IsDeadlineExceeded(answer.status())) << answer.status();
  // The held one still works.
  ASSERT_TRUE(held->Write("GET /x HTTP/1.1\r\nHost: h\r\n\r\n").ok());
  EXPECT_TRUE(held->ReadUntil("got GET").ok());
}

TEST_F(HttpServerTest, ABadRequestGetsTheCallersWordsAndTheConnectionCloses) {
  HttpServer::Options options;
  options.body_limit = 4;
  options.bad_request = [](std::string_view problem) {
    return BadRequestAnswer{"application/json", "{\"problem\":\"" + std::string(problem) + "\"}"};
  };
  ASSERT_NO_FATAL_FAILURE(Start(std::move(options)));
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(
      conn->Write("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789").ok());
  Result<std::string> answer = conn->ReadUntilClose(10'000);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << *answer;
  EXPECT_NE(answer->find("Content-Type: application/json\r\n"), std::string::npos) << *answer;
  EXPECT_NE(answer->find("{\"problem\":\"body limit exceeded\"}"), std::string::npos) << *answer;
}

}  // namespace
}  // namespace longhaul::net
