#include "core/net/http_client.h"

#include <cctype>
#include <thread>

#include "core/net/http_pool.h"
#include "core/strings.h"

namespace longhaul::net {

using namespace http_internal;

namespace {

bool HasCrLf(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

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

HttpClient::Core::Core(asio::io_context& io, HttpUrl url, Options options)
    : io_(io), url_(std::move(url)), options_(std::move(options)), sweep_(io) {
  bool v6 = url_.host.find(':') != std::string::npos;
  host_header_ = StrCat(v6 ? "[" : "", url_.host, v6 ? "]" : "", ":", static_cast<int>(url_.port));
  if (!url_.https) return;
  tls_.emplace(asio::ssl::context::tls_client);
  beast::error_code ec;
  if (options_.ca_file.empty()) {
    tls_->set_default_verify_paths(ec);
  } else {
    tls_->load_verify_file(options_.ca_file, ec);
  }
  if (ec) {
    tls_error_ = absl::FailedPreconditionError(StrCat(
        "cannot load ", options_.ca_file.empty() ? "the system's CA store" : options_.ca_file, ": ",
        ec.message()));
  }
  tls_->set_verify_mode(asio::ssl::verify_peer);
}

void HttpClient::Core::Send(Pending p) {
  if (!tls_error_.ok()) return Fail(std::move(p), tls_error_);
  const HttpRequest& r = p.request;
  if (HasCrLf(r.method) || HasCrLf(r.target) || HasCrLf(r.content_type) || r.target.empty() ||
      r.target[0] != '/') {
    return Fail(std::move(p),
                absl::InvalidArgumentError(StrCat("bad request line: ", r.method, " ", r.target)));
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
  ++open_;  // a request waiting for the lookup holds its connection's place under the cap
  if (!endpoints_) {
    SteadyTime deadline = DeadlineAfter(SteadyClock::now(), p.request.timeouts.connect_ms);
    resolving_.push_back(Resolving{std::move(p), deadline});
    StartResolve();
    ArmSweep();
    return;
  }
  Open(std::move(p));
}

void HttpClient::Core::Open(Pending p) {
  auto c = std::make_shared<Connection>(shared_from_this());
  ++stats_.connections_opened;
  AddBusy(c);
  c->Start(std::move(p));
}

void HttpClient::Core::FreedPlaces() {
  while (!queue_.empty() && (options_.max_connections == 0 || open_ < options_.max_connections)) {
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    --stats_.queued;
    Dispatch(std::move(p), /*fresh=*/true);
  }
}

void HttpClient::Core::StartResolve() {
  if (resolve_) return;
  auto state = std::make_shared<ResolveState>();
  resolve_ = state;
  resolve_work_.emplace(io_.get_executor());
  std::thread([state, weak = weak_from_this(), io = &io_, host = url_.host,
               port = std::to_string(url_.port), before = options_.before_resolve] {
    if (before) before(host);
    asio::io_context own;  // the resolver's; the answer holds copies of the addresses
    tcp::resolver resolver(own);
    beast::error_code ec;
    tcp::resolver::results_type results = resolver.resolve(host, port, ec);
    std::lock_guard<std::mutex> lock(state->mu);
    if (state->abandoned) return;  // nobody waits: `io` may be gone
    asio::post(*io, [state, weak, ec, results] {
      auto core = weak.lock();
      if (core && !core->shut_down_) core->OnResolved(state, ec, results);
    });
  }).detach();
}

void HttpClient::Core::OnResolved(const std::shared_ptr<ResolveState>& state, beast::error_code ec,
                                  const tcp::resolver::results_type& results) {
  if (state != resolve_) return;  // abandoned after it posted
  resolve_.reset();
  resolve_work_.reset();
  std::deque<Resolving> waiting;
  waiting.swap(resolving_);
  if (ec) {
    Status s = absl::UnavailableError(StrCat("resolve ", url_.host, ": ", ec.message()));
    for (auto& r : waiting) {
      --open_;
      Fail(std::move(r.p), s);
    }
    FreedPlaces();
    return;
  }
  endpoints_ = results;
  for (auto& r : waiting) Open(std::move(r.p));
}

void HttpClient::Core::AbandonResolve() {
  if (!resolve_) return;
  {
    std::lock_guard<std::mutex> lock(resolve_->mu);
    resolve_->abandoned = true;
  }
  resolve_.reset();
  resolve_work_.reset();
}

void HttpClient::Core::ExpireResolving(SteadyTime now) {
  for (auto it = resolving_.begin(); it != resolving_.end();) {
    if (now < it->deadline && now < it->p.total_deadline) {
      ++it;
      continue;
    }
    const HttpTimeouts& t = it->p.request.timeouts;
    bool total = now >= it->p.total_deadline && now < it->deadline;
    Status s = absl::DeadlineExceededError(
        StrCat("resolve ", url_.host, ": no answer within ", total ? t.total_ms : t.connect_ms,
               total ? " ms (the total timeout)" : " ms (the connect timeout)"));
    Fail(std::move(it->p), s);
    it = resolving_.erase(it);
    --open_;
  }
  if (resolving_.empty()) AbandonResolve();
  FreedPlaces();
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
  if (busy_.empty() && queue_.empty() && resolving_.empty() && sweeping_) {
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
  ExpireResolving(now);
  while (!queue_.empty()) {
    // Deadlines in the queue are not ordered (timeouts differ per request); check them all.
    bool any = false;
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (now >= it->total_deadline) {
        Pending p = std::move(*it);
        queue_.erase(it);
        --stats_.queued;
        Status s =
            absl::DeadlineExceededError(StrCat("no connection to ", url_.Origin(), " free within ",
                                               p.request.timeouts.total_ms, " ms"));
        Fail(std::move(p), s);
        any = true;
        break;
      }
    }
    if (!any) break;
  }
  if (!busy_.empty() || !queue_.empty() || !resolving_.empty()) ArmSweep();
}

void HttpClient::Core::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  for (auto& c : idle_) c->Close();
  for (auto& c : busy_) c->Close();
  idle_.clear();
  busy_.clear();
  queue_.clear();
  resolving_.clear();
  AbandonResolve();
  beast::error_code ignored;
  sweep_.cancel();
}

HttpClient::HttpClient(asio::io_context& io, HttpUrl url, Options options)
    : core_(std::make_shared<Core>(io, std::move(url), std::move(options))) {}

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

Result<HttpResult> HttpFetch(const HttpUrl& url, HttpRequest request,
                             const HttpClient::Options& options) {
  asio::io_context io;
  HttpResult out;
  Status status = absl::InternalError("request did not complete");
  {
    HttpClient client(io, url, options);
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

}  // namespace longhaul::net
