// longhauld's HTTP listener (Boost.Beast): the JSON API, the watch streams and the UI's files,
// over TLS when it has a certificate. One thread runs every socket (asio); requests that read
// the store or wait on the scheduler loop run on a small worker pool, so an open SSE stream
// costs a socket, not a thread.
//
// Hostile clients are bounded: a header must arrive within header_timeout_ms of the connection
// (TLS handshake included) and fit max_header_bytes (else 431), a body fit max_body_bytes
// (else 413); past max_connections open connections a new one is answered 503; every request
// must name this server in Host (host_check.h). docs/security.md has the reasons.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "daemon/http/request_authorizer.h"
#include "daemon/http/sse_hub.h"
#include "daemon/rpc/client_api.h"

namespace longhaul::http {

struct HttpOptions {
  std::string listen;  // HOST:PORT (port 0 picks a free one); empty: no listener
  std::string ui_dir;                     // serve the UI from here instead of the built-in copy
  int workers = 4;                        // threads for blocking API calls
  SseOptions sse;
  int64_t idle_timeout_ms = 60'000;       // a keep-alive connection idle this long is closed
  int64_t header_timeout_ms = 10'000;     // a request header not complete by then: closed
  size_t max_body_bytes = 16 << 20;
  size_t max_header_bytes = 64 << 10;
  int max_connections = 1024;      // open at once; past it a new connection gets 503
  std::vector<std::string> hosts;  // more names for the Host check ("NAME[:PORT]")
  // PEM certificate chain and key: when set, the listener speaks only HTTPS (TLS 1.2+).
  std::string tls_cert_pem;
  std::string tls_key_pem;
};

class HttpServer {
 public:
  // `authorizer` may be null (allow all).
  HttpServer(rpc::ClientApi* api, HttpOptions options,
             const RequestAuthorizer* authorizer = nullptr);
  ~HttpServer();

  // Binds and starts serving. Returns the bound address "HOST:PORT". InvalidArgument for a bad
  // --http-host or certificate/key, Unavailable when the address cannot be bound.
  Result<std::string> Start();
  // Closes the listener and every connection; waits for the threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace longhaul::http
