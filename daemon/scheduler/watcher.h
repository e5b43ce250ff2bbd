// A client following one run (WatchRun). The scheduler pushes updates after each commit; the
// RPC thread takes them. Pending updates merge (newer stage states replace older ones), so a
// slow client sees the latest state, not a backlog. Thread-safe.
//
// What Next() hands out is bounded: at most kMaxStagesPerMessage stages (and about
// kMaxStageBytesPerMessage bytes) to an update (proto/stage_merge.h). A pushed snapshot goes
// out in chunks: the first has `snapshot` set, the one that completes it `snapshot_complete`
// (stages that change meanwhile are merged in, or sent again if already sent). Pushing costs
// O(stages pushed); taking an update O(stages in it).
//
// A consumer that must not block a thread on Next() (the HTTP server's SSE hub) sets an
// on_push callback: it runs after every Push, on the pushing thread, and should only schedule
// a Next(…, 0) elsewhere.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "longhaul/v1/client.pb.h"

namespace longhaul::scheduler {

class Watcher {
 public:
  // Merges `update` into what is pending. `final`: the run has ended; nothing follows.
  void Push(const v1::RunUpdate& update, bool final);
  // Waits up to `timeout_ms` for a pending update and takes (a chunk of) it. Returns false on
  // timeout (or after Cancel()); `*final` tells whether this was the last one.
  bool Next(v1::RunUpdate* out, bool* final, int64_t timeout_ms);
  // The client went away; the scheduler drops the watcher at its next publish.
  void Cancel();
  // Replaces the push callback (empty: none). Once it returns, the old callback is not
  // running and will not run again.
  void SetOnPush(std::function<void()> on_push);
  bool cancelled() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool has_pending_ = false;  // something to send, if only run fields
  v1::Run pending_;           // newest run fields; stages [sent_, size) not yet sent
  int sent_ = 0;
  std::unordered_map<std::string, int> unsent_;  // name -> index >= sent_ in pending_
  bool snapshot_start_ = false;  // the next update opens a snapshot
  bool in_snapshot_ = false;     // a snapshot is being sent
  bool final_ = false;
  bool cancelled_ = false;
  std::function<void()> on_push_;
};

}  // namespace longhaul::scheduler
