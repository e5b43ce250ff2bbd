// A minimal HTTP/1.1 listener for a few read-only plain-text endpoints, such as
// longhaul-agent's /metrics and /healthz (docs/operations.md, "Agent metrics"). GET or HEAD
// of a registered path answers what its handler returns; any other path 404, any other method
// 405. One request per connection (the answer says Connection: close). A client must send its
// request header within 10 s and in at most 8 KiB, and a request with a body is refused (400);
// past 64 open connections a new one is closed at once. No TLS and no authentication: bind it
// to loopback unless the network in between is trusted. Built on core/net/http_server.h.
//
// Threads: the listener runs on its own thread, and so do the handlers, so neither a slow
// client nor a handler that reads the disk holds up the caller's event loop. A handler must
// therefore be thread-safe with respect to whatever it reads (atomics, a snapshot).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/status.h"

namespace longhaul {

struct TextResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class TextHttpServer {
 public:
  using Handler = std::function<TextResponse()>;

  TextHttpServer();
  ~TextHttpServer();  // Stop()s
  TextHttpServer(const TextHttpServer&) = delete;
  TextHttpServer& operator=(const TextHttpServer&) = delete;

  // Registers `path` ("/metrics"). Only before Start().
  void Handle(const std::string& path, Handler handler);

  // Binds `listen` (core/net/listen_address.h; port 0 picks a free one) and starts serving.
  // Returns the bound address "HOST:PORT". InvalidArgument for a bad address, Unavailable when
  // it cannot be bound. At most once.
  Result<std::string> Start(const std::string& listen);

  // Closes the listener and every connection and joins the thread. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace longhaul
