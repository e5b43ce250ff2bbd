// What longhauld counts for Prometheus, and the text exposition format (version 0.0.4) it is
// served in. The scheduler's thread updates the counters; /metrics reads them from another
// thread: every instrument is thread-safe. Gauges are not stored here: they are computed at
// scrape time from the scheduler's state and the store (rpc::ClientApi::Metrics).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace longhaul::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

// Cumulative histogram with fixed upper bounds (seconds), as Prometheus defines it.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf last
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Read() const;

 private:
  const std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), +Inf last
  double sum_ = 0;
};

// A counter with one label, e.g. failures by reason.
class LabeledCounter {
 public:
  void Add(const std::string& label_value, uint64_t n = 1);
  std::map<std::string, uint64_t> Read() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> values_;
};

// A counter with two labels, e.g. notifications by kind and state.
class LabeledCounter2 {
 public:
  void Add(const std::string& first, const std::string& second, uint64_t n = 1);
  std::map<std::pair<std::string, std::string>, uint64_t> Read() const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, uint64_t> values_;
};

// The coordinator's own counters; one per longhauld, owned by the Coordinator.
struct CoordinatorMetrics {
  std::atomic<uint64_t> attempts_started{0};
  LabeledCounter attempt_failures;  // by the kind of end: exit, signal, timeout, lost, ...
  std::atomic<uint64_t> events_ingested{0};
  // Notifications by event kind and state: "pending" when decided, "retry" for each failed
  // try that will be tried again, "delivered", "failed" (tries exhausted).
  LabeledCounter2 notifications;
  // From a stage becoming ready to its agent saying it started.
  Histogram handoff_seconds{{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
                             10, 30, 60}};
  // One store transaction's commit (a batch of the scheduler loop).
  Histogram sqlite_commit_seconds{
      {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}};
};

// Writes the text exposition format: a HELP and TYPE line per family, then its samples.
// Label values are escaped (\\, \", \n); names are the caller's and must be valid.
class TextWriter {
 public:
  void Family(const std::string& name, const std::string& type, const std::string& help);
  void Sample(const std::string& name, const Labels& labels, double value);
  void Write(const std::string& name, const std::string& help, const Histogram& h);
  const std::string& text() const { return out_; }

 private:
  std::string out_;
};

// A number as Prometheus reads it: integers without a fraction, NaN, +Inf, -Inf.
std::string FormatValue(double value);

}  // namespace longhaul::metrics
