#include "core/net/http_client.h"

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <chrono>

#include "stages/common/openai.h"
#include "stages/common/sse.h"
#include "tests/stages/common/fake_openai_server.h"

namespace longhaul::net {
namespace {

using longhaul::testing::FakeOpenAiOptions;
using longhaul::testing::FakeOpenAiServer;
using Clock = std::chrono::steady_clock;

HttpRequest Chat(bool stream, int max_tokens = 100) {
  stages::GenerationParams p;
  p.model = "fake-model";
  p.stream = stream;
  p.max_tokens = max_tokens;
  HttpRequest r;
  r.method = "POST";
  r.target = "/v1/chat/completions";
  r.body = stages::BuildChatRequest({{"user", "hello there"}}, p);
  return r;
}

struct Outcome {
  int status = 0;
  std::string body;
  Status done = absl::InternalError("not done");
  bool called = false;
  std::vector<Clock::time_point> piece_times;
};

HttpHandler Into(Outcome& o) {
  HttpHandler h;
  h.on_head = [&o](const HttpResponseHead& head) { o.status = head.status; };
  h.on_body = [&o](std::string_view p) {
    o.body.append(p);
    o.piece_times.push_back(Clock::now());
  };
  h.on_done = [&o](const Status& s) {
    o.done = s;
    o.called = true;
  };
  return h;
}

class HttpClientTest : public ::testing::Test {
 protected:
  HttpUrl Url(const FakeOpenAiServer& s) { return *ParseHttpUrl(s.url()); }
  boost::asio::io_context io_;
};

TEST_F(HttpClientTest, SequentialRequestsReuseOneKeptAliveConnection) {
  FakeOpenAiServer server;
  server.Start();
  HttpClient client(io_, Url(server));
  std::vector<Outcome> out(5);
  std::function<void(size_t)> next = [&](size_t i) {
    if (i == out.size()) return;
    HttpHandler h = Into(out[i]);
    auto done = h.on_done;
    h.on_done = [&, i, done](const Status& s) {
      done(s);
      next(i + 1);
    };
    client.Send(Chat(/*stream=*/false), std::move(h));
  };
  next(0);
  io_.run();
  for (const auto& o : out) {
    ASSERT_TRUE(o.done.ok()) << o.done;
    EXPECT_EQ(o.status, 200);
    auto c = stages::ParseCompletionResponse(o.body);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->content, "Hello there, my friend.");
  }
  EXPECT_EQ(client.stats().connections_opened, 1);
  EXPECT_EQ(server.connections(), 1);
}

TEST_F(HttpClientTest, StreamsChunkedSseAsItArrives) {
  FakeOpenAiOptions opts;
  opts.chunk_interval_us = 50'000;
  FakeOpenAiServer server(opts);
  server.Start();
  HttpClient client(io_, Url(server));
  Outcome o;
  std::vector<Clock::time_point> event_times;
  stages::Completion total;
  stages::SseParser sse([&](const stages::SseEvent& e) {
    event_times.push_back(Clock::now());
    auto d = stages::ParseStreamEvent(e.data);
    ASSERT_TRUE(d.ok()) << d.status();
    Accumulate(*d, total);
  });
  HttpHandler h = Into(o);
  h.on_body = [&](std::string_view p) { ASSERT_TRUE(sse.Feed(p).ok()); };
  client.Send(Chat(/*stream=*/true), std::move(h));
  io_.run();
  ASSERT_TRUE(o.done.ok()) << o.done;
  EXPECT_EQ(total.content, "Hello there, my friend.");
  ASSERT_TRUE(total.usage.has_value());
  EXPECT_EQ(total.usage->completion_tokens, 6);
  ASSERT_EQ(event_times.size(), 9u);  // 6 tokens, finish, usage, [DONE]
  // Pieces were handed over as they came, not at the end: eight 50 ms gaps separate the
  // first event from the last.
  EXPECT_GE(event_times.back() - event_times.front(), std::chrono::milliseconds(200));
}

TEST_F(HttpClientTest, OpenLoopOpensAConnectionPerConcurrentRequest) {
  FakeOpenAiOptions opts;
  opts.first_chunk_delay_us = 100'000;
  FakeOpenAiServer server(opts);
  server.Start();
  HttpClient client(io_, Url(server));
  std::vector<Outcome> out(8);
  for (auto& o : out) client.Send(Chat(true), Into(o));
  io_.run();
  for (const auto& o : out) EXPECT_TRUE(o.done.ok()) << o.done;
  EXPECT_EQ(client.stats().connections_opened, 8);
}

TEST_F(HttpClientTest, MaxConnectionsQueuesRequestsInOrder) {
  FakeOpenAiOptions opts;
  opts.first_chunk_delay_us = 20'000;
  FakeOpenAiServer server(opts);
  server.Start();
  HttpClient client(io_, Url(server), {.max_connections = 2});
  std::vector<Outcome> out(6);
  for (auto& o : out) client.Send(Chat(true), Into(o));
  EXPECT_EQ(client.stats().queued, 4);
  io_.run();
  for (const auto& o : out) EXPECT_TRUE(o.done.ok()) << o.done;
  EXPECT_EQ(client.stats().connections_opened, 2);
  EXPECT_EQ(server.connections(), 2);
}

TEST_F(HttpClientTest, FirstByteAndTotalTimeoutsAreNamed) {
  FakeOpenAiServer server;
  server.Start();
  server.SetHang(true);
  HttpClient client(io_, Url(server));
  Outcome a, b;
  HttpRequest r1 = Chat(true);
  r1.timeouts.first_byte_ms = 100;
  HttpRequest r2 = Chat(true);
  r2.timeouts.total_ms = 150;
  auto start = Clock::now();
  client.Send(r1, Into(a));
  client.Send(r2, Into(b));
  io_.run();
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(150));
  EXPECT_EQ(a.done.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(a.done.message().find("first-byte timeout"), std::string::npos) << a.done;
  EXPECT_EQ(b.done.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(b.done.message().find("not complete within 150 ms"), std::string::npos) << b.done;
}

TEST_F(HttpClientTest, ConnectionRefusedIsUnavailable) {
  int port;
  {
    boost::asio::ip::tcp::acceptor acc(io_, {boost::asio::ip::make_address("127.0.0.1"), 0});
    port = acc.local_endpoint().port();
  }
  HttpClient client(io_, *ParseHttpUrl("http://127.0.0.1:" + std::to_string(port)));
  Outcome o;
  client.Send(Chat(false), Into(o));
  io_.run();
  EXPECT_EQ(o.done.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(o.done.message().find("connect to http://127.0.0.1:"), std::string::npos) << o.done;
}

TEST_F(HttpClientTest, DroppedConnectionsAreUnavailable) {
  FakeOpenAiOptions opts;
  opts.chunk_interval_us = 1000;
  FakeOpenAiServer server(opts);
  server.Start();
  server.PushStatuses({FakeOpenAiServer::kDrop, FakeOpenAiServer::kDropMidStream});
  HttpClient client(io_, Url(server));
  Outcome a;
  client.Send(Chat(true), Into(a));
  io_.run();
  io_.restart();
  Outcome b;
  client.Send(Chat(true), Into(b));
  io_.run();
  EXPECT_EQ(a.done.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(a.done.message().find("before responding"), std::string::npos) << a.done;
  EXPECT_EQ(b.done.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(b.done.message().find("in the middle of the response"), std::string::npos) << b.done;
}

TEST_F(HttpClientTest, StaleKeptAliveConnectionIsRetriedOnce) {
  auto server = std::make_unique<FakeOpenAiServer>();
  int port = server->Start();
  HttpClient client(io_, Url(*server));
  Outcome a;
  client.Send(Chat(false), Into(a));
  io_.run();
  ASSERT_TRUE(a.done.ok()) << a.done;
  // The server goes away and comes back: the pooled connection is dead.
  server.reset();
  server = std::make_unique<FakeOpenAiServer>();
  server->Start(port);
  io_.restart();
  Outcome b;
  client.Send(Chat(false), Into(b));
  io_.run();
  EXPECT_TRUE(b.done.ok()) << b.done;
  EXPECT_EQ(b.status, 200);
  EXPECT_EQ(client.stats().stale_retries, 1);
  EXPECT_EQ(client.stats().connections_opened, 2);
}

TEST_F(HttpClientTest, FetchReturnsStatusAndBody) {
  FakeOpenAiServer server;
  server.Start();
  HttpRequest r;
  r.target = "/health";
  auto ok = HttpFetch(Url(server), r);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->status(), 200);
  server.SetHealthy(false);
  auto bad = HttpFetch(Url(server), r);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status(), 503);
  EXPECT_EQ(bad->body, "unhealthy");
  EXPECT_EQ(bad->head.Header("content-type"), "text/plain");
}

TEST_F(HttpClientTest, ABodyPastTheRequestsLimitFailsTheRequest) {
  FakeOpenAiServer server;
  server.Start();
  server.SetHealthy(false);  // answers "unhealthy", 9 bytes
  HttpRequest r;
  r.target = "/health";
  r.body_limit = 9;
  auto whole = HttpFetch(Url(server), r);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->body, "unhealthy");
  r.body_limit = 8;
  auto cut = HttpFetch(Url(server), r);
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kInvalidArgument) << cut.status();
  EXPECT_NE(cut.status().message().find("longer than 8 bytes (body limit exceeded)"),
            std::string::npos)
      << cut.status();
}

TEST_F(HttpClientTest, ShutdownDropsPendingHandlers) {
  FakeOpenAiServer server;
  server.Start();
  server.SetHang(true);
  Outcome o;
  {
    HttpClient client(io_, Url(server));
    client.Send(Chat(true), Into(o));
    io_.run_for(std::chrono::milliseconds(50));
  }
  io_.run();
  EXPECT_FALSE(o.called);
}

TEST_F(HttpClientTest, RejectsHeaderInjection) {
  FakeOpenAiServer server;
  server.Start();
  HttpClient client(io_, Url(server));
  HttpRequest r = Chat(false);
  r.headers.push_back({"X-A", "b\r\nX-Evil: 1"});
  Outcome o;
  client.Send(r, Into(o));
  io_.run();
  EXPECT_EQ(o.done.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(server.generation_requests(), 0);
}

}  // namespace
}  // namespace longhaul::net
