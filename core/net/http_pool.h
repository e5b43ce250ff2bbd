// Internals of HttpClient (http_client.h), shared by its two halves: the pool
// (http_client.cc: dispatch, queueing, timeouts) and one connection's request cycle
// (http_connection.cc). Not part of the library's interface.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/net/http_client.h"

namespace longhaul::net::http_internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;

// Timeouts are checked by one sweep over the requests in flight, not a timer per request.
constexpr auto kSweepPeriod = std::chrono::milliseconds(10);
constexpr size_t kBodyPiece = 16 * 1024;
constexpr SteadyTime kNever = SteadyTime::max();

inline SteadyTime DeadlineAfter(SteadyTime from, int64_t ms) {
  return ms > 0 ? from + std::chrono::milliseconds(ms) : kNever;
}

struct Pending {
  HttpRequest request;
  HttpHandler handler;
  SteadyTime total_deadline = kNever;
  bool retried = false;  // already re-sent once after a stale keep-alive connection
};

class Connection;

// A request waiting for the host's addresses, with its connect deadline. It counts in open_
// (the connection it will open).
struct Resolving {
  Pending p;
  SteadyTime deadline = kNever;
};

// One lookup on its thread. `abandoned` (under `mu`) once nobody waits for it any more (the
// client shut down, or every waiting request timed out): the thread then posts nothing.
struct ResolveState {
  std::mutex mu;
  bool abandoned = false;
};

}  // namespace longhaul::net::http_internal

namespace longhaul::net {

using http_internal::Connection;
using http_internal::Pending;
using http_internal::ResolveState;
using http_internal::Resolving;

class HttpClient::Core : public std::enable_shared_from_this<HttpClient::Core> {
 public:
  Core(boost::asio::io_context& io, HttpUrl url, Options options);

  void Send(Pending p);
  // A connection finished its request; `reusable` if it may serve another.
  void Release(const std::shared_ptr<Connection>& c, bool reusable);
  // Starts `p` on a new connection (`fresh`) or an idle one, or queues it at the cap.
  void Dispatch(Pending p, bool fresh);
  void Shutdown();
  void Fail(Pending p, Status s);

  boost::asio::io_context& io_;
  HttpUrl url_;
  std::string host_header_;
  Options options_;
  std::optional<boost::asio::ssl::context> tls_;  // for an https:// URL
  Status tls_error_;                              // the CA file could not be loaded
  bool shut_down_ = false;
  std::optional<boost::asio::ip::tcp::resolver::results_type> endpoints_;
  std::vector<std::shared_ptr<Connection>> idle_;
  std::vector<std::shared_ptr<Connection>> busy_;
  std::deque<Pending> queue_;
  std::deque<Resolving> resolving_;        // waiting for the lookup in flight
  std::shared_ptr<ResolveState> resolve_;  // the lookup in flight, if any
  // Keeps io_.run() going while a lookup is in flight (its thread is not the io_context's).
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
      resolve_work_;
  size_t open_ = 0;  // idle + busy + waiting for the lookup
  boost::asio::steady_timer sweep_;
  bool sweeping_ = false;
  Stats stats_;

 private:
  void AddBusy(const std::shared_ptr<Connection>& c);
  void RemoveBusy(Connection* c);
  void ArmSweep();
  void Sweep();
  // Starts `p` on a new connection (its place in open_ already taken).
  void Open(Pending p);
  // Places under max_connections came free (requests that waited for a lookup failed): starts
  // queued requests in them.
  void FreedPlaces();
  // Looks the host up on a thread of its own unless a lookup is in flight; OnResolved gets
  // the answer on the io_context's thread.
  void StartResolve();
  void OnResolved(const std::shared_ptr<ResolveState>& state, boost::beast::error_code ec,
                  const boost::asio::ip::tcp::resolver::results_type& results);
  // Nobody waits for the lookup in flight any more: its answer is dropped.
  void AbandonResolve();
  // Fails the requests waiting for the lookup whose connect deadline has passed.
  void ExpireResolving(http_internal::SteadyTime now);
};

}  // namespace longhaul::net

namespace longhaul::net::http_internal {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  explicit Connection(const std::shared_ptr<HttpClient::Core>& core);

  void Start(Pending p);
  void CheckDeadline(SteadyTime now);
  void Close() {
    beast::error_code ignored;
    socket().close(ignored);
  }
  bool open() { return socket().is_open(); }

  size_t busy_index = 0;

 private:
  void Connect();
  void ConnectNext();
  void Handshake();
  void Write();
  void ReadHeader();
  void ReadBody();
  void Finish();
  void Fail(beast::error_code ec, std::string_view phase);
  std::shared_ptr<HttpClient::Core> LiveCore() {
    auto core = core_.lock();
    return core && !core->shut_down_ ? core : nullptr;
  }

  // The TCP socket, under the TLS stream for https.
  tcp::socket& socket() { return tls_ ? tls_->next_layer() : socket_; }
  // Calls `f` with the stream requests and responses go through: the TLS stream or the socket.
  template <typename F>
  void WithStream(F&& f) {
    if (tls_) {
      f(*tls_);
    } else {
      f(socket_);
    }
  }

  std::weak_ptr<HttpClient::Core> core_;
  tcp::socket socket_;                                   // plain http
  std::unique_ptr<asio::ssl::stream<tcp::socket>> tls_;  // https
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::buffer_body>> parser_;
  std::string wire_;
  Pending cur_;
  bool has_request_ = false;
  bool connecting_ = false;
  size_t next_endpoint_ = 0;  // the address being tried
  bool reused_ = false;       // it has served a response before
  bool got_bytes_ = false;    // any byte of the current response
  SteadyTime connect_deadline_ = kNever;
  SteadyTime first_byte_deadline_ = kNever;
  Status timeout_;  // set by CheckDeadline before it closes the socket
  char piece_[kBodyPiece];
};

}  // namespace longhaul::net::http_internal
