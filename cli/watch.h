// `longhaul watch`: turns a stream of RunUpdates into what the user sees.
//
// RunTracker merges updates into the run's current state (the first update is a snapshot;
// later ones carry the run's fields and only the stages that changed). WatchRenderer draws
// it: on a terminal, a table of every stage redrawn in place (ANSI cursor-up and clear);
// piped, one plain line per change. Not thread-safe: the caller serializes OnUpdate, Redraw
// and Finish.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "longhaul/v1/client.pb.h"

namespace longhaul::cli {

class RunTracker {
 public:
  // Returns the names of the stages this update carried, in its order.
  std::vector<std::string> Apply(const v1::RunUpdate& update);
  const v1::Run& run() const { return run_; }
  bool has_run() const { return has_run_; }

 private:
  v1::Run run_;
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

 private:
  void PrintPlainChanges(const std::vector<std::string>& stages);
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
};

}  // namespace longhaul::cli
