// core/net's HTTP client looking its host up: on a thread of its own, bounded by each waiting
// request's connect timeout, once for every request that waits on it. A slow name service is
// the test hook Options::before_resolve, which holds the lookup until the test lets it go.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <future>
#include <memory>

#include "core/net/http_client.h"
#include "core/net/text_http_server.h"
#include "core/net/url.h"
#include "tests/testing/test_util.h"

namespace longhaul::net {
namespace {

// Holds every lookup until Release(); counts them.
struct HeldLookups {
  std::shared_ptr<std::promise<void>> gate = std::make_shared<std::promise<void>>();
  std::shared_future<void> open = gate->get_future().share();
  std::shared_ptr<std::atomic<int>> count = std::make_shared<std::atomic<int>>(0);

  std::function<void(const std::string&)> Hook() {
    return [open = open, count = count](const std::string&) {
      ++*count;
      open.wait();
    };
  }
  void Release() { gate->set_value(); }
};

HttpUrl ResolveTestUrl(const std::string& address) {
  Result<HttpUrl> url = ParseHttpUrl("http://" + address + "/");
  EXPECT_TRUE(url.ok()) << url.status();
  return url.ok() ? *url : HttpUrl{};
}

TEST(HttpClientResolveTest, ALookupWithNoAnswerFailsAtTheConnectTimeout) {
  HeldLookups held;
  HttpClient::Options options;
  options.before_resolve = held.Hook();
  HttpRequest request;
  request.timeouts.connect_ms = 200;
  auto start = std::chrono::steady_clock::now();
  Result<HttpResult> r = HttpFetch(ResolveTestUrl("127.0.0.1:9"), request, options);
  auto waited = std::chrono::steady_clock::now() - start;
  held.Release();  // the lookup's thread ends on its own; its answer is dropped

  ASSERT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
  EXPECT_EQ(r.status().message(),
            "resolve 127.0.0.1: no answer within 200 ms (the connect timeout)");
  EXPECT_GE(waited, std::chrono::milliseconds(200));
  // Bounded by the timeout, not by the lookup (which never answered while it waited).
  EXPECT_LT(waited, std::chrono::seconds(10));
  EXPECT_TRUE(testing::WaitFor([&] { return *held.count == 1; }, 10'000)) << *held.count;
}

TEST(HttpClientResolveTest, RequestsWaitingForOneLookupAllGoOnWhenItAnswers) {
  TextHttpServer server;
  server.Handle("/ok", [] { return TextResponse{200, "text/plain", "fine"}; });
  Result<std::string> address = server.Start("127.0.0.1:0");
  ASSERT_TRUE(address.ok()) << address.status();

  HeldLookups held;
  boost::asio::io_context io;
  HttpClient::Options options;
  options.before_resolve = held.Hook();
  HttpClient client(io, ResolveTestUrl(*address), options);
  std::vector<Status> done;
  std::vector<std::string> bodies(3);
  for (int i = 0; i < 3; ++i) {
    HttpRequest request;
    request.target = "/ok";
    request.timeouts.connect_ms = 60'000;
    HttpHandler h;
    h.on_body = [&bodies, i](std::string_view piece) { bodies[i].append(piece); };
    h.on_done = [&done](const Status& s) { done.push_back(s); };
    client.Send(std::move(request), std::move(h));
  }
  held.Release();  // before the loop runs: all three are waiting on the one lookup
  io.run();        // returns once all are answered: the lookup kept it going meanwhile

  ASSERT_EQ(done.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(done[i].ok()) << done[i];
    EXPECT_EQ(bodies[i], "fine");
  }
  EXPECT_EQ(*held.count, 1) << "one lookup for the requests that waited on it";
}

TEST(HttpClientResolveTest, ARequestWaitingForALookupHoldsItsPlaceUnderTheCapUntilItTimesOut) {
  HeldLookups held;
  boost::asio::io_context io;
  HttpClient::Options options;
  options.max_connections = 1;
  options.before_resolve = held.Hook();
  HttpClient client(io, ResolveTestUrl("127.0.0.1:9"), options);
  std::vector<Status> done;
  for (int i = 0; i < 2; ++i) {
    HttpRequest request;
    request.timeouts.connect_ms = 100;
    HttpHandler h;
    h.on_done = [&done](const Status& s) { done.push_back(s); };
    client.Send(std::move(request), std::move(h));
  }
  EXPECT_EQ(client.stats().queued, 1) << "the first holds the one place while it looks up";
  io.run();  // the first times out, the second gets its place, looks up again, times out
  held.Release();

  ASSERT_EQ(done.size(), 2u);
  for (const Status& s : done) {
    EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
    EXPECT_NE(s.message().find("(the connect timeout)"), std::string::npos) << s;
  }
  // Counted on the lookups' own threads.
  EXPECT_TRUE(testing::WaitFor([&] { return *held.count == 2; }, 10'000))
      << *held.count << " lookups: an abandoned one is not waited for again";
  EXPECT_EQ(client.stats().queued, 0);
}

TEST(HttpClientResolveTest, AFailedLookupFailsEveryWaitingRequestAndTheNextLooksUpAgain) {
  HttpClient::Options options;
  auto count = std::make_shared<std::atomic<int>>(0);
  options.before_resolve = [count](const std::string&) { ++*count; };
  boost::asio::io_context io;
  // ".invalid" never resolves (RFC 6761), and answers at once from the resolver library.
  HttpClient client(io, ResolveTestUrl("no-such-host.invalid:80"), options);
  std::vector<Status> done;
  for (int round = 0; round < 2; ++round) {
    HttpRequest request;
    request.timeouts.connect_ms = 5'000;
    HttpHandler h;
    h.on_done = [&done](const Status& s) { done.push_back(s); };
    client.Send(std::move(request), std::move(h));
    io.restart();
    io.run();
  }
  ASSERT_EQ(done.size(), 2u);
  for (const Status& s : done) {
    EXPECT_TRUE(absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s)) << s;
    EXPECT_NE(s.message().find("resolve no-such-host.invalid"), std::string::npos) << s;
  }
  EXPECT_EQ(*count, 2) << "a failed lookup is not kept";
}

}  // namespace
}  // namespace longhaul::net
