// `longhaul watch`: turns a stream of RunUpdates into what the user sees.
//
// RunTracker merges updates into the run's current state (the first update is a snapshot,
// perhaps in chunks; later ones carry the run's fields and only the stages that changed), at a
// cost of the stages each update carries. WatchRenderer draws it: on a terminal, a table of
// every stage redrawn in place (ANSI cursor-up and clear); piped, one plain line per change.
// A run of more than kSmallRunStages stages (cli/run_view.h) is summarised instead: counts per
// state, then the stages running, failed and most recently changed (kSummaryStages each); piped,
// once the snapshot is complete a counts line when the run's state changes or (at most once a
// second) its counts do, a line for each stage that fails, and the counts at the end. Not thread-safe:
// the caller serializes OnUpdate, Redraw and Finish.
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
  // `width` gives the terminal's columns (0: unknown, 120 assumed); used in terminal mode.
  WatchRenderer(std::ostream& out, const Clock& clock, bool terminal,
                std::function<int()> width = nullptr);

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
  // What must change for a plain line to be printed: state, attempt, reason, message, and
  // progress by a whole percent (or any done count without a total).
  static std::string Signature(const v1::Stage& stage);

  std::ostream& out_;
  const Clock& clock_;
  bool terminal_;
  std::function<int()> width_;
  RunTracker tracker_;
  std::map<std::string, std::string> printed_;  // stage -> Signature last printed
  int last_run_status_ = -1;
  int lines_drawn_ = 0;
  bool loading_snapshot_ = false;   // a snapshot's chunks are still coming
  std::deque<std::string> recent_;  // big runs: stages changed lately, newest first
  std::string last_counts_;         // big runs, piped: the counts line printed last
  int64_t last_counts_ms_ = 0;
};

}  // namespace longhaul::cli
