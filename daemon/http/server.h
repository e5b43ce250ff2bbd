// longhauld's HTTP listener (Boost.Beast): the JSON API, the watch streams and the UI's files.
// One thread runs every socket (asio); requests that read the store or wait on the scheduler
// loop run on a small worker pool, so an open SSE stream costs a socket, not a thread.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "daemon/http/authorizer.h"
#include "daemon/http/sse_hub.h"
#include "daemon/rpc/client_api.h"

namespace longhaul::http {

struct HttpOptions {
  std::string listen;  // HOST:PORT (port 0 picks a free one); empty: no listener
  std::string ui_dir;                     // serve the UI from here instead of the built-in copy
  int workers = 4;                        // threads for blocking API calls
  SseOptions sse;
  int64_t idle_timeout_ms = 60'000;       // a keep-alive connection idle this long is closed
  size_t max_body_bytes = 16 << 20;
};

class HttpServer {
 public:
  // `authorizer` may be null (allow all).
  HttpServer(rpc::ClientApi* api, HttpOptions options, const Authorizer* authorizer = nullptr);
  ~HttpServer();

  // Binds and starts serving. Returns the bound address "HOST:PORT".
  Result<std::string> Start();
  // Closes the listener and every connection; waits for the threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace longhaul::http
