// One connection of longhauld's HTTP listener, plaintext or TLS (daemon/http/server.h): reads
// requests with bounded header size and time, checks Host, hands requests to the router (on
// the worker pool) or the SSE hub, and writes the answers with the security headers.
//
// Every member runs on the listener's io thread, except what is posted to the worker pool.
// Owned by shared_ptrs held by its pending operations; it ends when the last one completes.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "daemon/http/host_check.h"
#include "daemon/http/router.h"
#include "daemon/http/sse_hub.h"

namespace longhaul::http {

struct HttpOptions;

// What a connection's session has to reach; everything outlives the sessions.
struct SessionContext {
  boost::asio::io_context* io;
  boost::asio::thread_pool* pool;
  Router* router;
  SseHub* hub;
  const HttpOptions* options;
  const HostCheck* host_check;
};

// Counts an open connection while it lives (moved from the acceptor into the session).
class ConnectionSlot {
 public:
  explicit ConnectionSlot(std::atomic<int>* open) : open_(open) { open_->fetch_add(1); }
  ConnectionSlot(ConnectionSlot&& o) noexcept : open_(o.open_) { o.open_ = nullptr; }
  ConnectionSlot& operator=(ConnectionSlot&&) = delete;
  ~ConnectionSlot() {
    if (open_) open_->fetch_sub(1);
  }

 private:
  std::atomic<int>* open_;
};

enum class SessionMode {
  kServe,          // answer requests
  kOverCapacity,   // answer 503 at once (the connection cap is reached), then close
  kPlainOnTlsPort  // a plaintext request on the TLS port: answer 400 saying so, then close
};

// Starts serving `stream` (beast::tcp_stream, or beast::ssl_stream over one, not yet shaken
// hands) whose lowest layer already has its header deadline set; `read_ahead` holds bytes
// already read from it (by TLS detection).
template <class Stream>
void StartSession(Stream stream, boost::beast::flat_buffer read_ahead, SessionContext context,
                  ConnectionSlot slot, SessionMode mode);

}  // namespace longhaul::http
