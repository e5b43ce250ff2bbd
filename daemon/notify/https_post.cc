#include "daemon/notify/https_post.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <charconv>
#include <optional>

#include "core/strings.h"

namespace longhaul::notify {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Deadline = std::chrono::steady_clock::time_point;

// Runs one asynchronous operation, started by `start(handler)`, until it completes or
// `deadline` passes; then closes `socket`, which ends the operation, and returns timed_out.
template <typename Start>
beast::error_code RunUntil(asio::io_context& io, tcp::socket& socket, Deadline deadline,
                           Start start) {
  std::optional<beast::error_code> done;
  start([&done](beast::error_code ec, auto&&...) { done = ec; });
  io.restart();
  while (!done && io.run_one_until(deadline) > 0) {
  }
  if (done) return *done;
  beast::error_code ignored;
  socket.close(ignored);
  io.restart();
  io.run();
  return asio::error::timed_out;
}

// "certificate verify failed (self-signed certificate in certificate chain)": OpenSSL's words
// for a handshake that failed, where asio's category says only "handshake failed".
std::string HandshakeError(const beast::error_code& ec, SSL* ssl) {
  std::string text = ec.message();
  long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    text = StrCat("certificate verify failed (", X509_verify_cert_error_string(verify), ")");
  }
  return text;
}

}  // namespace

Result<HttpsUrl> ParseHttpsUrl(std::string_view url) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("webhook '", url, "': ", why));
  };
  constexpr std::string_view kScheme = "https://";
  if (url.substr(0, kScheme.size()) != kScheme) return bad("expected an https:// URL");
  std::string_view rest = url.substr(kScheme.size());
  size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  HttpsUrl out;
  if (slash != std::string_view::npos) {
    out.target = std::string(rest.substr(slash));
    if (out.target[0] == '?') out.target = "/" + out.target;
  }
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed '[' in the host");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return bad("expected ':PORT' after the host");
      port = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (out.host.empty()) return bad("no host");
  if (authority.find('@') != std::string_view::npos) return bad("user info is not supported");
  if (!port.empty()) {
    unsigned value = 0;
    auto [end, err] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (err != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
      return bad(StrCat("port '", port, "' is not a number from 1 to 65535"));
    }
    out.port = static_cast<uint16_t>(value);
  }
  for (char c : out.target) {
    if (c == '\r' || c == '\n' || c == ' ') return bad("the path holds a space or line break");
  }
  return out;
}

Result<HttpsAnswer> HttpsPost(const std::string& url, const std::string& body,
                              const std::string& ca_file, int64_t timeout_ms) {
  ASSIGN_OR_RETURN(HttpsUrl u, ParseHttpsUrl(url));
  Deadline deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  asio::ssl::context tls(asio::ssl::context::tls_client);
  beast::error_code ec;
  if (ca_file.empty()) {
    tls.set_default_verify_paths(ec);
  } else {
    tls.load_verify_file(ca_file, ec);
  }
  if (ec) {
    return absl::FailedPreconditionError(
        StrCat("cannot load ", ca_file.empty() ? "the system's CA store" : ca_file, ": ",
               ec.message()));
  }
  tls.set_verify_mode(asio::ssl::verify_peer);

  asio::io_context io;
  beast::ssl_stream<tcp::socket> stream(io, tls);
  tcp::socket& socket = stream.next_layer();
  bool is_ip = false;
  asio::ip::make_address(u.host, ec);
  is_ip = !ec;
  if (!is_ip && SSL_set_tlsext_host_name(stream.native_handle(), u.host.c_str()) != 1) {
    return absl::InvalidArgumentError(StrCat("webhook '", url, "': cannot send '", u.host,
                                             "' as the TLS server name"));
  }
  stream.set_verify_callback(asio::ssl::host_name_verification(u.host));

  tcp::resolver resolver(io);
  tcp::resolver::results_type endpoints;
  std::optional<beast::error_code> resolved;
  resolver.async_resolve(u.host, std::to_string(u.port),
                         [&](beast::error_code e, tcp::resolver::results_type r) {
                           resolved = e;
                           endpoints = std::move(r);
                         });
  while (!resolved && io.run_one_until(deadline) > 0) {
  }
  if (!resolved) {
    resolver.cancel();
    io.restart();
    io.run();
    return absl::DeadlineExceededError(StrCat("resolving ", u.host, ": timed out after ",
                                              timeout_ms, " ms"));
  }
  if (*resolved) {
    return absl::UnavailableError(StrCat("resolving ", u.host, ": ", resolved->message()));
  }

  std::string host = u.host.find(':') == std::string::npos ? u.host : StrCat("[", u.host, "]");
  std::string where = StrCat(host, ":", u.port);
  auto failed = [&](std::string_view step, const std::string& what) -> Status {
    if (ec == asio::error::timed_out) {
      return absl::DeadlineExceededError(StrCat(step, " ", where, ": timed out after ",
                                                timeout_ms, " ms"));
    }
    return absl::UnavailableError(StrCat(step, " ", where, ": ", what));
  };
  ec = RunUntil(io, socket, deadline, [&](auto handler) {
    asio::async_connect(socket, endpoints, std::move(handler));
  });
  if (ec) return failed("connect", ec.message());
  ec = RunUntil(io, socket, deadline, [&](auto handler) {
    stream.async_handshake(asio::ssl::stream_base::client, std::move(handler));
  });
  if (ec) return failed("TLS handshake with", HandshakeError(ec, stream.native_handle()));

  http::request<http::string_body> req{http::verb::post, u.target, 11};
  req.set(http::field::host, u.port == 443 ? host : where);
  req.set(http::field::user_agent, "longhauld");
  req.set(http::field::content_type, "application/json");
  req.keep_alive(false);
  req.body() = body;
  req.prepare_payload();
  ec = RunUntil(io, socket, deadline,
                [&](auto handler) { http::async_write(stream, req, std::move(handler)); });
  if (ec) return failed("sending to", ec.message());
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(1 << 20);
  ec = RunUntil(io, socket, deadline, [&](auto handler) {
    http::async_read(stream, buffer, parser, std::move(handler));
  });
  if (ec) return failed("reading the answer of", ec.message());
  HttpsAnswer answer;
  answer.status = static_cast<int>(parser.get().result_int());
  answer.body = std::move(parser.get().body());
  // No TLS close_notify: the whole answer is in, and a server that never answers one would
  // hold the call until its deadline.
  return answer;
}

}  // namespace longhaul::notify
