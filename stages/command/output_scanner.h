// Reads an external command's output (stdout and stderr) for what the workflow asked to track:
// progress, loss, epoch and other metrics, each found by a regex the workflow gives
// (ECMAScript syntax, searched in every line), and turns matches into stage events.
//
// Lines end at '\n' or '\r' (stages/common/line_splitter.h), so tqdm-style progress bars,
// which redraw with '\r', are seen as they are drawn. Events are rate-limited (the latest
// value of each kind is kept and written later), so a loop that prints every step does not
// flood the event file; Flush() writes what is pending. Time comes from a Clock. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/event_writer.h"
#include "core/status.h"

namespace longhaul::command {

struct ScanPatterns {
  std::string progress;  // group 1 = done, optional group 2 = total
  std::string loss;      // group 1 = value -> metric "loss"
  std::string epoch;     // group 1 = epoch, optional group 2 = total epochs -> metric "epoch"
  std::vector<std::string> metrics;  // "NAME=REGEX", group 1 = value -> metric NAME
  std::string progress_unit = "steps";
  int64_t min_interval_ms = 100;  // between two events of one kind
};

class OutputScanner {
 public:
  // InvalidArgument naming the flag for a pattern that does not compile or lacks a group:
  // "--loss-pattern 'loss=(': ..." .
  static Result<OutputScanner> Create(const ScanPatterns& patterns, const Clock* clock);

  // One line of output (without its line end).
  void ScanLine(std::string_view line, EventWriter& events);
  // Writes every pending (rate-limited) event.
  void Flush(EventWriter& events);

  std::optional<double> done() const { return done_; }
  std::optional<double> total() const { return total_; }
  std::optional<double> last_loss() const;
  int64_t matches() const { return matches_; }

 private:
  struct MetricRule {
    std::string name;
    std::regex re;
  };
  struct Pending {
    double value = 0;
    std::optional<int64_t> step;
    int64_t last_emit_ms = -1;
    bool pending = false;
  };

  OutputScanner() = default;
  void Metric(const std::string& name, double value, std::optional<int64_t> step,
              EventWriter& events);
  void Progress(EventWriter& events, bool force);

  const Clock* clock_ = nullptr;
  ScanPatterns p_;
  std::optional<std::regex> progress_, epoch_;
  std::vector<MetricRule> rules_;  // loss first, then --metric-pattern in order
  std::map<std::string, Pending> metrics_;
  std::optional<double> done_, total_;
  std::string unit_;
  int64_t progress_emit_ms_ = -1;
  bool progress_pending_ = false;
  int64_t loss_lines_ = 0;
  int64_t matches_ = 0;
};

}  // namespace longhaul::command
