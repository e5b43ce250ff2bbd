#include "daemon/http/sse_hub.h"

#include <boost/asio/post.hpp>
#include <chrono>
#include <cstdlib>

#include "core/clock.h"
#include "core/strings.h"
#include "daemon/http/json.h"
#include "proto/stage_merge.h"

namespace longhaul::http {

SseHub::SseHub(boost::asio::io_context* io, boost::asio::thread_pool* pool, rpc::ClientApi* api,
               SseOptions options)
    : io_(io),
      pool_(pool),
      api_(api),
      options_(options),
      heartbeat_(*io),
      // Ids stay increasing across restarts of longhauld, so an old Last-Event-ID is never
      // mistaken for one of this process.
      next_id_(SystemClock::Get()->NowMs() * 1000) {}

SseHub::~SseHub() {
  for (auto& [id, feed] : feeds_) {
    feed->watcher->SetOnPush(nullptr);
    feed->watcher->Cancel();
  }
}

void SseHub::Start() { Heartbeat(); }

void SseHub::Heartbeat() {
  heartbeat_.expires_after(std::chrono::milliseconds(options_.heartbeat_ms));
  heartbeat_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    auto hb = std::make_shared<const std::string>(": hb\n\n");
    for (auto& [id, feed] : feeds_) {
      for (auto& s : feed->streams) s->Send(hb);
    }
    Heartbeat();
  });
}

void SseHub::Stop() {
  stopped_ = true;
  heartbeat_.cancel();
  std::map<int64_t, std::shared_ptr<Feed>> feeds;
  feeds.swap(feeds_);
  for (auto& [id, feed] : feeds) {
    feed->watcher->SetOnPush(nullptr);
    feed->watcher->Cancel();
    for (auto& s : feed->streams) s->End();
    for (auto& w : feed->waiting) {
      w.stream->Refuse(ErrorResponse(503, absl::StatusCode::kUnavailable, "longhauld is stopping"));
    }
  }
  stream_run_.clear();
  open_ = 0;
}

void SseHub::Open(std::shared_ptr<SseStream> stream, int64_t run_id,
                  const std::string& last_event_id) {
  if (stopped_ || open_ >= options_.max_streams) {
    Response r = ErrorResponse(503, absl::StatusCode::kUnavailable,
                               StrCat("too many open watch streams (", open_, ", the limit is ",
                                      options_.max_streams, "); close some pages or retry later"));
    r.headers.emplace_back("Retry-After", "5");
    stream->Refuse(std::move(r));
    return;
  }
  ++open_;
  stream_run_[stream.get()] = run_id;
  auto it = feeds_.find(run_id);
  if (it != feeds_.end()) {
    Feed& feed = *it->second;
    if (feed.ready) {
      Join(feed, std::move(stream), last_event_id);
    } else {
      feed.waiting.push_back({std::move(stream), last_event_id});
    }
    return;
  }
  auto feed = std::make_shared<Feed>();
  feed->run_id = run_id;
  feed->watcher = std::make_shared<scheduler::Watcher>();
  feed->waiting.push_back({std::move(stream), last_event_id});
  feeds_[run_id] = feed;
  std::weak_ptr<Feed> weak = feed;
  feed->watcher->SetOnPush([this, run_id, weak] {
    boost::asio::post(*io_, [this, run_id, weak] { Drain(run_id, weak); });
  });
  boost::asio::post(*pool_, [this, run_id, feed] {
    Status s = api_->Watch(run_id, feed->watcher);
    boost::asio::post(*io_, [this, run_id, feed, s] { Registered(run_id, feed, s); });
  });
}

void SseHub::Registered(int64_t run_id, std::shared_ptr<Feed> feed, Status status) {
  if (status.ok() || stopped_) return;  // the snapshot arrives through Drain
  auto it = feeds_.find(run_id);
  if (it == feeds_.end() || it->second != feed) return;
  std::vector<Waiting> waiting = std::move(feed->waiting);
  feed->watcher->SetOnPush(nullptr);
  feeds_.erase(it);
  for (auto& w : waiting) {
    stream_run_.erase(w.stream.get());
    --open_;
    w.stream->Refuse(ErrorResponse(status));
  }
}

void SseHub::Drain(int64_t run_id, std::weak_ptr<Feed> weak) {
  std::shared_ptr<Feed> feed = weak.lock();
  if (!feed || stopped_) return;
  // One piece per turn of the I/O thread: a big run's first snapshot piece goes out (and other
  // connections are served) while its other pieces wait their turn, instead of every piece
  // being formatted before the first byte is written.
  v1::RunUpdate update;
  bool final = false;
  if (!feed->ended && feed->watcher->Next(&update, &final, 0)) {
    Apply(*feed, update, final);
    if (!feed->ended) {
      boost::asio::post(*io_, [this, run_id, weak] { Drain(run_id, weak); });
      return;
    }
  }
  // Ended, or every stream left before the first snapshot came.
  if (feed->ended || (feed->ready && feed->streams.empty() && feed->waiting.empty())) {
    DropFeed(run_id);
  }
}

std::shared_ptr<const std::string> SseHub::Format(const char* event, int64_t id,
                                                  const std::string& data) const {
  return std::make_shared<const std::string>(
      StrCat("id: ", id, "\nevent: ", event, "\ndata: ", data, "\n\n"));
}

void SseHub::Broadcast(Feed& feed, const char* event, const std::string& data) {
  int64_t id = ++next_id_;
  auto text = Format(event, id, data);
  feed.history.push_back({id, text});
  while (feed.history.size() > options_.history) feed.history.pop_front();
  feed.last_id = id;
  for (auto& s : feed.streams) s->Send(text);
}

void SseHub::Apply(Feed& feed, const v1::RunUpdate& update, bool final) {
  feed.complete = feed.complete || update.snapshot_complete();
  if (!feed.ready) {
    feed.ready = true;
    feed.state.Clear();
    feed.state.Merge(update.run());
    feed.last_id = ++next_id_;
    std::vector<Waiting> waiting = std::move(feed.waiting);
    for (auto& w : waiting) Join(feed, std::move(w.stream), w.last_event_id);
  } else {
    feed.state.Merge(update.run());
    v1::RunUpdate change = update;
    change.set_snapshot(false);  // the rest of a snapshot's chunks: plain updates here
    Broadcast(feed, "update", ToJson(change));
  }
  if (final) {
    Broadcast(feed, "end", "{}");
    feed.ended = true;
    for (auto& s : feed.streams) s->End();
  }
}

void SseHub::Join(Feed& feed, std::shared_ptr<SseStream> stream, const std::string& last_event_id) {
  stream->Begin();
  int64_t last = -1;
  if (!last_event_id.empty()) {
    char* end = nullptr;
    long long v = std::strtoll(last_event_id.c_str(), &end, 10);
    if (end != last_event_id.c_str() && *end == '\0') last = v;
  }
  bool held = last == feed.last_id ||
              (!feed.history.empty() && last >= feed.history.front().id - 1 && last < feed.last_id);
  if (held) {
    for (const Event& e : feed.history) {
      if (e.id > last) stream->Send(e.text);
    }
  } else {
    SendSnapshot(feed, *stream);
    if (feed.ended) stream->Send(feed.history.back().text);  // the "end"
  }
  if (feed.ended) {
    stream->End();
    return;
  }
  feed.streams.push_back(std::move(stream));
}

void SseHub::SendSnapshot(const Feed& feed, SseStream& stream) const {
  // In pieces of kMaxStagesPerMessage stages: "snapshot" with the first, "update" with each
  // other; only the last carries the event id, so a reconnect in between gets a snapshot.
  const v1::Run& state = feed.state.run();
  int size = state.stages_size();
  int begin = 0;
  do {
    int end = EndOfPiece(state.stages(), begin, size);
    v1::RunUpdate piece;
    v1::Run* run = piece.mutable_run();
    *run = feed.state.fields();
    for (int i = begin; i < end; ++i) *run->add_stages() = state.stages(i);
    piece.set_snapshot(begin == 0);
    piece.set_snapshot_complete(end == size && feed.complete);
    std::string data = ToJson(piece);
    stream.Send(end == size ? Format(begin == 0 ? "snapshot" : "update", feed.last_id, data)
                            : std::make_shared<const std::string>(
                                  StrCat("event: ", begin == 0 ? "snapshot" : "update",
                                         "\ndata: ", data, "\n\n")));
    begin = end;
  } while (begin < size);
}

void SseHub::Close(SseStream* stream) {
  auto it = stream_run_.find(stream);
  if (it == stream_run_.end()) return;
  int64_t run_id = it->second;
  stream_run_.erase(it);
  --open_;
  auto f = feeds_.find(run_id);
  if (f == feeds_.end()) return;
  Feed& feed = *f->second;
  std::erase_if(feed.streams, [stream](const auto& s) { return s.get() == stream; });
  std::erase_if(feed.waiting, [stream](const auto& w) { return w.stream.get() == stream; });
  if (feed.streams.empty() && feed.waiting.empty() && feed.ready) DropFeed(run_id);
}

void SseHub::DropFeed(int64_t run_id) {
  auto it = feeds_.find(run_id);
  if (it == feeds_.end()) return;
  std::shared_ptr<Feed> feed = it->second;
  feeds_.erase(it);
  feed->watcher->SetOnPush(nullptr);
  feed->watcher->Cancel();
  // Streams still open on an ended feed were told End(); their Close() finds no feed.
}

}  // namespace longhaul::http
