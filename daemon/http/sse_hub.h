// Server-Sent Events for GET /api/v1/runs/{id}/watch. One scheduler Watcher per run, shared
// by every stream open on it: a snapshot first (a big run's in pieces of at most
// kMaxStagesPerMessage stages: "snapshot", then "update"s, the last with snapshot_complete),
// then each change as "update" (run fields and the stages that changed), then "end" after the
// update that made the run terminal. Every event carries an id from one increasing sequence; the
// last `history` events of each run are kept, so a reconnect whose Last-Event-ID is still held gets
// only what followed (otherwise a snapshot). A ": hb" comment goes to every stream each heartbeat.
// Past `max_streams` open streams a watch is answered 503 at once. The watcher's pieces are taken
// one per turn of the I/O thread, so a big snapshot's first piece is written before the others are
// formatted.
//
// Threading: every method runs on the I/O thread (the io_context's one thread). Registering
// the watcher blocks on the scheduler loop, so it runs on the worker pool.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "daemon/http/message.h"
#include "daemon/rpc/client_api.h"
#include "proto/stage_merge.h"

namespace longhaul::http {

// The server's side of one open watch request.
class SseStream {
 public:
  virtual ~SseStream() = default;
  // Sends the 200 text/event-stream header; Send() may follow.
  virtual void Begin() = 0;
  virtual void Send(std::shared_ptr<const std::string> chunk) = 0;
  // Ends the stream after what was sent.
  virtual void End() = 0;
  // Answers with `response` instead of a stream (before Begin()).
  virtual void Refuse(Response response) = 0;
};

struct SseOptions {
  int max_streams = 256;
  int64_t heartbeat_ms = 15'000;
  size_t history = 256;  // events kept per run for Last-Event-ID
};

class SseHub {
 public:
  SseHub(boost::asio::io_context* io, boost::asio::thread_pool* pool, rpc::ClientApi* api,
         SseOptions options);
  ~SseHub();

  // Starts the heartbeat timer.
  void Start();
  // Ends every stream and drops every watcher.
  void Stop();
  // A new watch of run `run_id`; `last_event_id` is the Last-Event-ID header ("" when none).
  void Open(std::shared_ptr<SseStream> stream, int64_t run_id, const std::string& last_event_id);
  // The stream's connection went away.
  void Close(SseStream* stream);
  int open_streams() const { return open_; }

 private:
  struct Event {
    int64_t id;
    std::shared_ptr<const std::string> text;
  };
  struct Waiting {
    std::shared_ptr<SseStream> stream;
    std::string last_event_id;
  };
  struct Feed {
    int64_t run_id = 0;
    std::shared_ptr<scheduler::Watcher> watcher;
    bool ready = false;     // the first snapshot arrived
    bool complete = false;  // and all of its pieces
    bool ended = false;
    MergedRun state;  // the run as of `last_id`
    int64_t last_id = 0;
    std::deque<Event> history;
    std::vector<std::shared_ptr<SseStream>> streams;
    std::vector<Waiting> waiting;  // before the first snapshot
  };

  void Registered(int64_t run_id, std::shared_ptr<Feed> feed, Status status);
  void Drain(int64_t run_id, std::weak_ptr<Feed> weak);
  void Apply(Feed& feed, const v1::RunUpdate& update, bool final);
  // Starts `stream` on a ready feed: the events after `last_event_id` if still held, else a
  // snapshot.
  void Join(Feed& feed, std::shared_ptr<SseStream> stream, const std::string& last_event_id);
  // The feed's state as a snapshot, in bounded pieces.
  void SendSnapshot(const Feed& feed, SseStream& stream) const;
  std::shared_ptr<const std::string> Format(const char* event, int64_t id,
                                            const std::string& data) const;
  void Broadcast(Feed& feed, const char* event, const std::string& data);
  void Heartbeat();
  void DropFeed(int64_t run_id);

  boost::asio::io_context* io_;
  boost::asio::thread_pool* pool_;
  rpc::ClientApi* api_;
  SseOptions options_;
  boost::asio::steady_timer heartbeat_;
  std::map<int64_t, std::shared_ptr<Feed>> feeds_;
  std::map<SseStream*, int64_t> stream_run_;  // every open stream -> its run
  int open_ = 0;
  int64_t next_id_;
  bool stopped_ = false;
};

}  // namespace longhaul::http
