// `longhaul watch`: turns a stream of RunUpdates into what the user sees.
//
// RunTracker merges updates into the run's current state (the first update is a snapshot,
// perhaps in chunks; later ones carry the run's fields and only the stages that changed), at a
// cost of the stages each update carries. WatchRenderer draws it: on a terminal, a table of
// every stage redrawn in place (ANSI cursor-up and clear); piped, one plain line per change of
// a stage's state (status, attempt, reason) at once, and of its progress or message at most
// once per `progress_interval_ms` per stage (a stage reporting 100 times a second is one line
// every 10 s, not 100 a second).
// A run of more than kSmallRunStages stages (cli/run_view.h) is summarised instead: counts per
// state, then the stages running, failed and most recently changed (kSummaryStages each); piped,
// once the snapshot is complete a counts line when the run's state changes or (at most once a
// second) its counts do, a line for each stage that fails, and the counts at the end. Not
// thread-safe: the caller serializes OnUpdate, Redraw and Finish.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "cli/run_view.h"
#include "core/clock.h"
#include "longhaul/v1/client.pb.h"
#include "proto/stage_merge.h"

namespace longhaul::cli {

class RunTracker {
 public:
  // Returns the names of the stages this update carried, in its order.
  std::vector<std::string> Apply(const v1::RunUpdate& update);
  const v1::Run& run() const { return run_.run(); }
  bool has_run() const { return has_run_; }
  // The stage named `name`, or null.
  const v1::Stage* Find(const std::string& name) const { return run_.Find(name); }

 private:
  MergedRun run_;
  bool has_run_ = false;
};

class WatchRenderer {
 public:
  static constexpr int64_t kDefaultProgressIntervalMs = 10'000;

  // `width` gives the terminal's columns (0: unknown, 120 assumed); used in terminal mode.
  // `progress_interval_ms`: piped, the least time between two lines of one stage that only
  // tell new progress or a new message.
  WatchRenderer(std::ostream& out, const Clock& clock, bool terminal,
                std::function<int()> width = nullptr,
                int64_t progress_interval_ms = kDefaultProgressIntervalMs);

  void OnUpdate(const v1::RunUpdate& update);
  // Terminal mode: draws the table again (elapsed times move on). No-op when piped.
  void Redraw();
  // The closing line: "run 12 succeeded in 5m07s" / "run 12 failed after 1h02m: REASON".
  void Finish();

  const v1::Run& run() const { return tracker_.run(); }

  // One stage's plain line (without the time prefix), e.g.
  // "datagen  running  attempt 1  1234/10000 samples (12%)  41.2 samples/s  ETA 3m38s".
  static std::string PlainStageLine(const v1::Stage& stage, int64_t now_ms);
  // Terminal mode's frame, one string per line, each cut to `width`.
  static std::vector<std::string> Frame(const v1::Run& run, int64_t now_ms, int width);
  // The frame of a big run: the header, counts per state, then the stages running, failed and
  // in `recent` (names, newest first), at most kSummaryStages each.
  static std::vector<std::string> SummaryFrame(const v1::Run& run,
                                               const std::deque<std::string>& recent,
                                               int64_t now_ms, int width);

 private:
  bool big() const { return run().stages_size() > kSmallRunStages; }
  void PrintPlainChanges(const std::vector<std::string>& stages);
  void PrintPlainSummary(const std::vector<std::string>& stages);
  void PrintCountsLine(const std::string& counts);
  void NoteRecent(const std::vector<std::string>& stages);
  // What must change for a plain line to be printed at once: state, attempt, reason (and the
  // count of malformed events).
  static std::string Signature(const v1::Stage& stage);
  // What must change for a plain line to be printed once the interval has passed: the message,
  // and progress by a whole percent (or any done count without a total).
  static std::string DetailSignature(const v1::Stage& stage);

  std::ostream& out_;
  const Clock& clock_;
  bool terminal_;
  std::function<int()> width_;
  RunTracker tracker_;
  int64_t progress_interval_ms_;
  std::map<std::string, std::string> printed_;  // stage -> Signature last printed
  struct Detail {
    std::string signature;   // DetailSignature last printed
    int64_t printed_ms = 0;  // when the stage's last line was printed
  };
  std::map<std::string, Detail> detail_;  // stage -> its last line's detail
  int last_run_status_ = -1;
  int lines_drawn_ = 0;
  bool loading_snapshot_ = false;   // a snapshot's chunks are still coming
  std::deque<std::string> recent_;  // big runs: stages changed lately, newest first
  std::string last_counts_;         // big runs, piped: the counts line printed last
  int64_t last_counts_ms_ = 0;
};

}  // namespace longhaul::cli
