#include "stages/common/http_client.h"

#include <cctype>
#include <chrono>
#include <deque>
#include <limits>
#include <optional>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include "core/strings.h"

namespace longhaul::stages {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;

namespace {

constexpr auto kSweepPeriod = std::chrono::milliseconds(10);
constexpr size_t kBodyPiece = 16 * 1024;
constexpr SteadyTime kNever = SteadyTime::max();

SteadyTime DeadlineAfter(SteadyTime from, int64_t ms) {
  return ms > 0 ? from + std::chrono::milliseconds(ms) : kNever;
}

bool HasCrLf(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

std::string ToStd(beast::string_view s) { return std::string(s.data(), s.size()); }

struct Pending {
  HttpRequest request;
  HttpHandler handler;
  SteadyTime total_deadline = kNever;
  bool retried = false;  // already re-sent once after a stale keep-alive connection
};

}  // namespace

std::string_view HttpResponseHead::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < k.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(k[i])) ==
             std::tolower(static_cast<unsigned char>(name[i]));
    }
    if (same) return v;
  }
  return {};
}

class Connection;

class HttpClient::Core : public std::enable_shared_from_this<HttpClient::Core> {
 public:
  Core(asio::io_context& io, HttpUrl url, Options options)
      : io_(io), url_(std::move(url)), options_(options), sweep_(io) {
    bool v6 = url_.host.find(':') != std::string::npos;
    host_header_ = StrCat(v6 ? "[" : "", url_.host, v6 ? "]" : "", ":",
                          static_cast<int>(url_.port));
  }

  void Send(Pending p);
  // A connection finished its request; `reusable` if it may serve another.
  void Release(const std::shared_ptr<Connection>& c, bool reusable);
  // Starts `p` on a new connection (`fresh`) or an idle one, or queues it at the cap.
  void Dispatch(Pending p, bool fresh);
  void Shutdown();
  void Fail(Pending p, Status s);

  asio::io_context& io_;
  HttpUrl url_;
  std::string host_header_;
  Options options_;
  bool shut_down_ = false;
  std::optional<tcp::resolver::results_type> endpoints_;
  std::vector<std::shared_ptr<Connection>> idle_;
  std::vector<std::shared_ptr<Connection>> busy_;
  std::deque<Pending> queue_;
  size_t open_ = 0;  // idle + busy
  asio::steady_timer sweep_;
  bool sweeping_ = false;
  Stats stats_;

 private:
  void AddBusy(const std::shared_ptr<Connection>& c);
  void RemoveBusy(Connection* c);
  void ArmSweep();
  void Sweep();
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  explicit Connection(const std::shared_ptr<HttpClient::Core>& core)
      : core_(core), socket_(core->io_) {}

  void Start(Pending p);
  void CheckDeadline(SteadyTime now);
  void Close() {
    beast::error_code ignored;
    socket_.close(ignored);
  }
  bool open() const { return socket_.is_open(); }

  size_t busy_index = 0;

 private:
  void Connect();
  void Write();
  void ReadHeader();
  void ReadBody();
  void Finish();
  void Fail(beast::error_code ec, std::string_view phase);
  std::shared_ptr<HttpClient::Core> LiveCore() {
    auto core = core_.lock();
    return core && !core->shut_down_ ? core : nullptr;
  }

  std::weak_ptr<HttpClient::Core> core_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::buffer_body>> parser_;
  std::string wire_;
  Pending cur_;
  bool has_request_ = false;
  bool connecting_ = false;
  bool reused_ = false;     // it has served a response before
  bool got_bytes_ = false;  // any byte of the current response
  SteadyTime connect_deadline_ = kNever;
  SteadyTime first_byte_deadline_ = kNever;
  Status timeout_;  // set by CheckDeadline before it closes the socket
  char piece_[kBodyPiece];
};

// ---- Connection ----

void Connection::Start(Pending p) {
  cur_ = std::move(p);
  has_request_ = true;
  got_bytes_ = false;
  timeout_ = OkStatus();
  first_byte_deadline_ = kNever;
  auto core = LiveCore();
  if (!core) return;
  const HttpRequest& r = cur_.request;
  wire_.clear();
  wire_.reserve(r.body.size() + r.target.size() + 160);
  wire_ += r.method;
  wire_ += ' ';
  wire_ += r.target;
  wire_ += " HTTP/1.1\r\nHost: ";
  wire_ += core->host_header_;
  wire_ += "\r\n";
  if (!r.body.empty() || r.method == "POST" || r.method == "PUT") {
    wire_ += StrCat("Content-Type: ", r.content_type, "\r\nContent-Length: ", r.body.size(),
                    "\r\n");
  }
  for (const auto& [k, v] : r.headers) wire_ += StrCat(k, ": ", v, "\r\n");
  wire_ += "\r\n";
  wire_ += r.body;
  if (socket_.is_open()) {
    Write();
  } else {
    Connect();
  }
}

void Connection::Connect() {
  auto core = LiveCore();
  if (!core) return;
  connecting_ = true;
  connect_deadline_ = DeadlineAfter(SteadyClock::now(), cur_.request.timeouts.connect_ms);
  asio::async_connect(socket_, *core->endpoints_,
                      [self = shared_from_this()](beast::error_code ec, const tcp::endpoint&) {
                        self->connecting_ = false;
                        if (ec) return self->Fail(ec, "connect");
                        beast::error_code ignored;
                        self->socket_.set_option(tcp::no_delay(true), ignored);
                        self->Write();
                      });
}

void Connection::Write() {
  first_byte_deadline_ = DeadlineAfter(SteadyClock::now(), cur_.request.timeouts.first_byte_ms);
  asio::async_write(socket_, asio::buffer(wire_),
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      if (ec) return self->Fail(ec, "write");
                      self->ReadHeader();
                    });
}

void Connection::ReadHeader() {
  parser_.emplace();
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  http::async_read_header(
      socket_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) {
          self->got_bytes_ = self->buffer_.size() > 0;
          return self->Fail(ec, "read");
        }
        self->got_bytes_ = true;
        auto core = self->LiveCore();
        if (!core) return;
        if (self->cur_.handler.on_head) {
          HttpResponseHead head;
          const auto& msg = self->parser_->get();
          head.status = static_cast<int>(msg.result_int());
          for (const auto& f : msg) head.headers.emplace_back(ToStd(f.name_string()), ToStd(f.value()));
          self->cur_.handler.on_head(head);
          if (!self->LiveCore()) return;
        }
        self->ReadBody();
      });
}

void Connection::ReadBody() {
  if (parser_->is_done()) return Finish();
  auto& body = parser_->get().body();
  body.data = piece_;
  body.size = sizeof piece_;
  http::async_read_some(
      socket_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec == http::error::need_buffer) ec = {};
        if (ec) return self->Fail(ec, "read");
        size_t got = sizeof self->piece_ - self->parser_->get().body().size;
        if (got > 0) {
          self->first_byte_deadline_ = kNever;
          if (self->cur_.handler.on_body) {
            self->cur_.handler.on_body(std::string_view(self->piece_, got));
            if (!self->LiveCore()) return;
          }
        }
        self->ReadBody();
      });
}

void Connection::Finish() {
  auto core = LiveCore();
  if (!core) return;
  HttpHandler handler = std::move(cur_.handler);
  has_request_ = false;
  reused_ = true;
  bool reusable = parser_->get().keep_alive() && socket_.is_open();
  if (!reusable) Close();
  core->Release(shared_from_this(), reusable);
  handler.on_done(OkStatus());
}

void Connection::Fail(beast::error_code ec, std::string_view phase) {
  auto core = LiveCore();
  if (!core) return;
  Close();
  has_request_ = false;
  auto self = shared_from_this();
  // A kept-alive connection the server closed while it sat idle fails on first use with
  // nothing received; every HTTP client re-sends once on a fresh connection.
  if (timeout_.ok() && phase != "connect" && reused_ && !got_bytes_ && !cur_.retried) {
    Pending p = std::move(cur_);
    p.retried = true;
    ++core->stats_.stale_retries;
    core->Release(self, false);
    core->Dispatch(std::move(p), /*fresh=*/true);
    return;
  }
  Status s = timeout_;
  if (s.ok()) {
    std::string where = StrCat(core->url_.Origin());
    if (phase == "connect") {
      s = absl::UnavailableError(StrCat("connect to ", where, ": ", ec.message()));
    } else if (ec == asio::error::eof || ec == http::error::end_of_stream ||
               ec == http::error::partial_message || ec == asio::error::connection_reset) {
      s = absl::UnavailableError(StrCat(where, " closed the connection ",
                                        got_bytes_ ? "in the middle of the response"
                                                   : "before responding"));
    } else if (ec.category() == http::make_error_code(http::error::bad_version).category()) {
      s = absl::InvalidArgumentError(StrCat("malformed HTTP response from ", where, ": ",
                                            ec.message()));
    } else {
      s = absl::UnavailableError(StrCat(phase, " ", where, ": ", ec.message()));
    }
  }
  HttpHandler handler = std::move(cur_.handler);
  core->Release(self, false);
  handler.on_done(s);
}

void Connection::CheckDeadline(SteadyTime now) {
  if (!has_request_ || !timeout_.ok()) return;
  auto core = LiveCore();
  if (!core) return;
  const HttpTimeouts& t = cur_.request.timeouts;
  std::string where = core->url_.Origin();
  if (connecting_ && now >= connect_deadline_) {
    timeout_ = absl::DeadlineExceededError(
        StrCat("connect to ", where, " timed out after ", t.connect_ms, " ms"));
  } else if (!connecting_ && now >= first_byte_deadline_) {
    timeout_ = absl::DeadlineExceededError(
        StrCat("no response body from ", where, " within ", t.first_byte_ms,
               " ms (first-byte timeout)"));
  } else if (now >= cur_.total_deadline) {
    timeout_ = absl::DeadlineExceededError(
        StrCat("response from ", where, " not complete within ", t.total_ms, " ms"));
  } else {
    return;
  }
  Close();  // the pending operation completes with an error and reports timeout_
}

// ---- Core ----

void HttpClient::Core::Send(Pending p) {
  const HttpRequest& r = p.request;
  if (HasCrLf(r.method) || HasCrLf(r.target) || HasCrLf(r.content_type) || r.target.empty() ||
      r.target[0] != '/') {
    return Fail(std::move(p), absl::InvalidArgumentError(
                                  StrCat("bad request line: ", r.method, " ", r.target)));
  }
  for (const auto& [k, v] : r.headers) {
    if (HasCrLf(k) || HasCrLf(v) || k.empty()) {
      return Fail(std::move(p), absl::InvalidArgumentError(StrCat("bad header '", k, "'")));
    }
  }
  p.total_deadline = DeadlineAfter(SteadyClock::now(), r.timeouts.total_ms);
  Dispatch(std::move(p), /*fresh=*/false);
}

void HttpClient::Core::Dispatch(Pending p, bool fresh) {
  if (!fresh) {
    while (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      if (!c->open()) {
        --open_;
        continue;
      }
      AddBusy(c);
      c->Start(std::move(p));
      return;
    }
  }
  if (options_.max_connections > 0 && open_ >= options_.max_connections) {
    if (fresh && !idle_.empty()) {  // make room: an idle connection is worth less
      idle_.front()->Close();
      idle_.erase(idle_.begin());
      --open_;
    } else {
      bool timed = p.request.timeouts.total_ms > 0;
      queue_.push_back(std::move(p));
      ++stats_.queued;
      if (timed) ArmSweep();
      return;
    }
  }
  if (!endpoints_) {
    beast::error_code ec;
    tcp::resolver resolver(io_);
    auto results = resolver.resolve(url_.host, std::to_string(url_.port), ec);
    if (ec) {
      return Fail(std::move(p), absl::UnavailableError(
                                    StrCat("resolve ", url_.host, ": ", ec.message())));
    }
    endpoints_ = results;
  }
  auto c = std::make_shared<Connection>(shared_from_this());
  ++open_;
  ++stats_.connections_opened;
  AddBusy(c);
  c->Start(std::move(p));
}

void HttpClient::Core::Fail(Pending p, Status s) {
  asio::post(io_, [weak = weak_from_this(), h = std::move(p.handler), s]() {
    auto core = weak.lock();
    if (core && !core->shut_down_) h.on_done(s);
  });
}

void HttpClient::Core::AddBusy(const std::shared_ptr<Connection>& c) {
  c->busy_index = busy_.size();
  busy_.push_back(c);
  ++stats_.in_flight;
  ArmSweep();
}

void HttpClient::Core::RemoveBusy(Connection* c) {
  size_t i = c->busy_index;
  if (i >= busy_.size() || busy_[i].get() != c) return;
  if (i + 1 != busy_.size()) {
    busy_[i] = std::move(busy_.back());
    busy_[i]->busy_index = i;
  }
  busy_.pop_back();
  --stats_.in_flight;
}

void HttpClient::Core::Release(const std::shared_ptr<Connection>& c, bool reusable) {
  RemoveBusy(c.get());
  if (reusable && !queue_.empty()) {
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    --stats_.queued;
    AddBusy(c);
    c->Start(std::move(p));
    return;
  }
  if (reusable && idle_.size() < options_.max_idle) {
    idle_.push_back(c);
  } else {
    c->Close();
    --open_;
    if (!queue_.empty()) {
      Pending p = std::move(queue_.front());
      queue_.pop_front();
      --stats_.queued;
      Dispatch(std::move(p), /*fresh=*/true);
    }
  }
  if (busy_.empty() && queue_.empty() && sweeping_) {
    sweeping_ = false;
    sweep_.cancel();  // so that a blocking HttpFetch's io_context.run() returns at once
  }
}

void HttpClient::Core::ArmSweep() {
  if (sweeping_ || shut_down_) return;
  sweeping_ = true;
  sweep_.expires_after(kSweepPeriod);
  sweep_.async_wait([weak = weak_from_this()](beast::error_code ec) {
    auto core = weak.lock();
    if (!core || ec == asio::error::operation_aborted) return;
    core->sweeping_ = false;
    core->Sweep();
  });
}

void HttpClient::Core::Sweep() {
  if (shut_down_) return;
  SteadyTime now = SteadyClock::now();
  for (size_t i = 0; i < busy_.size(); ++i) busy_[i]->CheckDeadline(now);
  while (!queue_.empty()) {
    // Deadlines in the queue are not ordered (timeouts differ per request); check them all.
    bool any = false;
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (now >= it->total_deadline) {
        Pending p = std::move(*it);
        queue_.erase(it);
        --stats_.queued;
        Status s = absl::DeadlineExceededError(StrCat("no connection to ", url_.Origin(),
                                                      " free within ",
                                                      p.request.timeouts.total_ms, " ms"));
        Fail(std::move(p), s);
        any = true;
        break;
      }
    }
    if (!any) break;
  }
  if (!busy_.empty() || !queue_.empty()) ArmSweep();
}

void HttpClient::Core::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  for (auto& c : idle_) c->Close();
  for (auto& c : busy_) c->Close();
  idle_.clear();
  busy_.clear();
  queue_.clear();
  beast::error_code ignored;
  sweep_.cancel();
}

// ---- HttpClient ----

HttpClient::HttpClient(asio::io_context& io, HttpUrl url, Options options)
    : core_(std::make_shared<Core>(io, std::move(url), options)) {}

HttpClient::~HttpClient() { core_->Shutdown(); }

void HttpClient::Send(HttpRequest request, HttpHandler handler) {
  Pending p;
  p.request = std::move(request);
  p.handler = std::move(handler);
  core_->Send(std::move(p));
}

void HttpClient::Shutdown() { core_->Shutdown(); }

const HttpUrl& HttpClient::url() const { return core_->url_; }

HttpClient::Stats HttpClient::stats() const { return core_->stats_; }

Result<HttpResult> HttpFetch(const HttpUrl& url, HttpRequest request) {
  asio::io_context io;
  HttpResult out;
  Status status = absl::InternalError("request did not complete");
  {
    HttpClient client(io, url);
    HttpHandler h;
    h.on_head = [&](const HttpResponseHead& head) { out.head = head; };
    h.on_body = [&](std::string_view piece) { out.body.append(piece); };
    h.on_done = [&](const Status& s) { status = s; };
    client.Send(std::move(request), std::move(h));
    io.run();
  }
  if (!status.ok()) return status;
  return out;
}

}  // namespace longhaul::stages
