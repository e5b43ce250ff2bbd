#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <limits>

#include "core/net/http_pool.h"
#include "core/strings.h"

namespace longhaul::net::http_internal {
namespace {

std::string BeastToStd(beast::string_view s) { return std::string(s.data(), s.size()); }

// "certificate verify failed (self-signed certificate in certificate chain)": OpenSSL's words
// for a handshake that failed, where asio's category says only "handshake failed".
std::string TlsHandshakeError(const beast::error_code& ec, SSL* ssl) {
  long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    return StrCat("certificate verify failed (", X509_verify_cert_error_string(verify), ")");
  }
  return ec.message();
}

}  // namespace

Connection::Connection(const std::shared_ptr<HttpClient::Core>& core)
    : core_(core), socket_(core->io_) {
  if (!core->tls_) return;
  tls_ = std::make_unique<asio::ssl::stream<tcp::socket>>(core->io_, *core->tls_);
  const std::string& host = core->url_.host;
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  // SNI for a name, not an address (RFC 6066); a name OpenSSL refuses fails the verification.
  if (ec) SSL_set_tlsext_host_name(tls_->native_handle(), host.c_str());
  tls_->set_verify_callback(asio::ssl::host_name_verification(host));
}

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
    wire_ +=
        StrCat("Content-Type: ", r.content_type, "\r\nContent-Length: ", r.body.size(), "\r\n");
  }
  for (const auto& [k, v] : r.headers) wire_ += StrCat(k, ": ", v, "\r\n");
  wire_ += "\r\n";
  wire_ += r.body;
  if (socket().is_open()) {
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
  next_endpoint_ = 0;
  ConnectNext();
}

// Tries the resolved addresses in turn. Not asio::async_connect over the range: it reports a
// socket that could not even be opened (EMFILE under overload) as "Operation canceled".
void Connection::ConnectNext() {
  auto core = LiveCore();
  if (!core) return;
  const auto& endpoints = *core->endpoints_;
  auto it = endpoints.begin();
  std::advance(it, static_cast<std::ptrdiff_t>(next_endpoint_));
  tcp::endpoint ep = it->endpoint();
  beast::error_code ec;
  socket().open(ep.protocol(), ec);
  if (ec) {
    connecting_ = false;
    return Fail(ec, "open");
  }
  socket().async_connect(ep, [self = shared_from_this()](beast::error_code ec) {
    auto core = self->LiveCore();
    if (!core) return;
    if (ec && self->timeout_.ok() && ec != asio::error::operation_aborted &&
        self->next_endpoint_ + 1 < core->endpoints_->size()) {
      ++self->next_endpoint_;
      self->Close();
      return self->ConnectNext();
    }
    if (ec) {
      self->connecting_ = false;
      return self->Fail(ec, "connect");
    }
    beast::error_code ignored;
    self->socket().set_option(tcp::no_delay(true), ignored);
    if (self->tls_) return self->Handshake();
    self->connecting_ = false;
    self->Write();
  });
}

// Under the connect timeout still (connecting_ stays set until it is done).
void Connection::Handshake() {
  tls_->async_handshake(asio::ssl::stream_base::client,
                        [self = shared_from_this()](beast::error_code ec) {
                          self->connecting_ = false;
                          if (ec) return self->Fail(ec, "handshake");
                          self->Write();
                        });
}

void Connection::Write() {
  first_byte_deadline_ = DeadlineAfter(SteadyClock::now(), cur_.request.timeouts.first_byte_ms);
  WithStream([this](auto& stream) {
    asio::async_write(stream, asio::buffer(wire_),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) return self->Fail(ec, "write");
                        self->ReadHeader();
                      });
  });
}

void Connection::ReadHeader() {
  parser_.emplace();
  uint64_t limit = cur_.request.body_limit;
  parser_->body_limit(limit > 0 ? limit : std::numeric_limits<std::uint64_t>::max());
  WithStream([this](auto& stream) {
    http::async_read_header(
        stream, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
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
            for (const auto& f : msg)
              head.headers.emplace_back(BeastToStd(f.name_string()), BeastToStd(f.value()));
            self->cur_.handler.on_head(head);
            if (!self->LiveCore()) return;
          }
          self->ReadBody();
        });
  });
}

void Connection::ReadBody() {
  if (parser_->is_done()) return Finish();
  auto& body = parser_->get().body();
  body.data = piece_;
  body.size = sizeof piece_;
  WithStream([this](auto& stream) {
    http::async_read_some(stream, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, size_t) {
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
  });
}

void Connection::Finish() {
  auto core = LiveCore();
  if (!core) return;
  HttpHandler handler = std::move(cur_.handler);
  has_request_ = false;
  reused_ = true;
  bool reusable = parser_->get().keep_alive() && socket().is_open();
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
  bool connecting = phase == "connect" || phase == "open" || phase == "handshake";
  if (timeout_.ok() && !connecting && reused_ && !got_bytes_ && !cur_.retried) {
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
    if (phase == "open") {
      s = absl::UnavailableError(StrCat("open a socket for ", where, ": ", ec.message()));
    } else if (phase == "connect") {
      s = absl::UnavailableError(StrCat("connect to ", where, ": ", ec.message()));
    } else if (phase == "handshake") {
      s = absl::UnavailableError(StrCat("TLS handshake with ", core->host_header_, ": ",
                                        TlsHandshakeError(ec, tls_->native_handle())));
    } else if (ec == asio::error::eof || ec == http::error::end_of_stream ||
               ec == http::error::partial_message || ec == asio::error::connection_reset) {
      s = absl::UnavailableError(
          StrCat(where, " closed the connection ",
                 got_bytes_ ? "in the middle of the response" : "before responding"));
    } else if (ec == http::error::body_limit) {
      s = absl::InvalidArgumentError(StrCat("the response from ", where, " is longer than ",
                                            cur_.request.body_limit,
                                            " bytes (body limit exceeded)"));
    } else if (ec.category() == http::make_error_code(http::error::bad_version).category()) {
      s = absl::InvalidArgumentError(
          StrCat("malformed HTTP response from ", where, ": ", ec.message()));
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
    timeout_ = absl::DeadlineExceededError(StrCat("no response body from ", where, " within ",
                                                  t.first_byte_ms, " ms (first-byte timeout)"));
  } else if (now >= cur_.total_deadline) {
    timeout_ = absl::DeadlineExceededError(
        StrCat("response from ", where, " not complete within ", t.total_ms, " ms"));
  } else {
    return;
  }
  Close();  // the pending operation completes with an error and reports timeout_
}

}  // namespace longhaul::net::http_internal
