// Early stopping in sweeps (docs/sweeps.md, "Early stopping"): which items of a foreach stage
// with `early_stop` lose, judged from the metric values they report with a step.
//
// A SweepJudge sees the values in the order they arrived and decides each item the moment it
// reaches a step it is judged at, from what the other items reported before it:
//
//   asha    At rung r (a step in `rungs`), the item's value is recorded with those of the
//           items that reached r before it. Of the n values recorded there, itself included,
//           it continues when it is among the best ceil(n / eta) (ties count in its favour),
//           else it stops. The first item at a rung always continues.
//   median  At step s (each step it reports, or only the `rungs` when given), once at least
//           min_items items, itself included, reached s: it stops when its best value at a
//           step <= s is worse than the median of the other items' values at s. An item's
//           value at s is the one it reported at the largest step <= s; it "reached" s when it
//           reported s or a later step.
//
// A stopped item is judged no further, but its values still count for the others. The same
// reports in the same order always give the same verdicts, so that a judge rebuilt from the
// stored metrics (after a restart) agrees with the one that ran.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "daemon/workflow/workflow.h"

namespace longhaul::scheduler {

struct EarlyStopVerdict {
  std::string item;  // the stage to stop
  int64_t step = 0;  // the step (asha: the rung) it was judged at
  double value = 0;  // its value there (median: its best so far)
  // "rung 1 (step 1): loss 1.5 is not among the best 2 of 4 items there; beaten by train-a
  // (0.7), train-b (0.8), train-c (0.9)": what the stage's reason becomes.
  std::string reason;
};

class SweepJudge {
 public:
  explicit SweepJudge(const workflow::EarlyStopSpec& spec) : spec_(spec) {}

  // `item` reported the judged metric with `value` at `step`. Returns the verdict when the
  // item must stop now; nullopt when it goes on (or was stopped before).
  std::optional<EarlyStopVerdict> Observe(const std::string& item, int64_t step, double value);

  bool Stopped(const std::string& item) const { return stopped_.count(item) > 0; }
  // Why `item` goes on, from the last judgement it passed: "loss 0.41 at rung 2 (step 4) is
  // among the best 2 of 5 (eta 2)", "best loss 0.41 at step 3 is not worse than the median
  // 0.6 of the other 4 items"; empty when it was never judged.
  std::string Kept(const std::string& item) const;
  const workflow::EarlyStopSpec& spec() const { return spec_; }

 private:
  struct Rung {
    std::vector<std::pair<std::string, double>> values;  // in arrival order
  };
  struct Curve {
    std::map<int64_t, double> by_step;  // the latest value reported at each step
    size_t next_rung = 0;               // asha: rungs_[next_rung] is the next one it meets
    std::string kept;                   // Kept()
  };

  bool Better(double a, double b) const { return spec_.maximize ? a > b : a < b; }
  std::optional<EarlyStopVerdict> JudgeAsha(const std::string& item, Curve& curve, int64_t step,
                                            double value);
  std::optional<EarlyStopVerdict> JudgeMedian(const std::string& item, int64_t step);
  // "a (0.7), b (0.8)", at most a few, then "and N more".
  static std::string Beaten(std::vector<std::pair<std::string, double>> by, bool maximize);

  workflow::EarlyStopSpec spec_;
  std::map<std::string, Curve> curves_;
  std::map<int64_t, Rung> rungs_;  // asha: by step
  std::set<std::string> stopped_;
};

}  // namespace longhaul::scheduler
