// The Prometheus text exposition format (version 0.0.4), as vLLM and SGLang serve it at
// /metrics: counters, gauges, histograms and summaries, labels with escapes, NaN/+Inf
// values, optional timestamps, # HELP / # TYPE lines. And the delta helpers a benchmark needs
// to turn two scrapes into what happened between them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"

namespace longhaul::stages {

using PromLabels = std::vector<std::pair<std::string, std::string>>;  // sorted by name

struct PromSample {
  std::string name;   // the sample's own name: "x_total", "x_bucket", "x_sum", ...
  PromLabels labels;  // sorted by label name
  double value = 0;
};

// Cumulative buckets as exposed: (upper bound `le`, count of observations <= le).
struct PromHistogram {
  std::vector<std::pair<double, double>> buckets;  // sorted by le; the last is +Inf
  double sum = 0;
  double count = 0;
};

// One scrape. Immutable once parsed; cheap lookups by sample name.
class PromSnapshot {
 public:
  // Errors name the line: "metrics line 12: expected a value after 'foo{a="b"}'".
  static Result<PromSnapshot> Parse(std::string_view text);

  const std::vector<PromSample>& samples() const { return samples_; }
  // The declared type of a family ("counter", "gauge", "histogram", "summary", "untyped"),
  // or "" when no # TYPE line named it.
  std::string TypeOf(std::string_view family) const;
  bool Has(std::string_view name) const { return index_.count(std::string(name)) > 0; }

  // The sum over every sample called `name` whose labels include all of `match` (so series
  // that differ only by e.g. an engine label add up). nullopt when none matches.
  std::optional<double> Sum(std::string_view name, const PromLabels& match = {}) const;

  // A counter by its family name: tries "name_total" first, then "name" itself (clients
  // differ on whether the exposed sample carries the suffix).
  std::optional<double> Counter(std::string_view family, const PromLabels& match = {}) const;

  // Values of `name` (or `name`_total) summed per distinct value of `label`, e.g. the
  // per-position acceptance counter keyed by "position".
  std::map<std::string, double> ByLabel(std::string_view family, std::string_view label) const;

  // The histogram `family` (its _bucket/_sum/_count samples) summed over series matching
  // `match`. nullopt when it has no buckets.
  std::optional<PromHistogram> Histogram(std::string_view family,
                                         const PromLabels& match = {}) const;

 private:
  std::vector<PromSample> samples_;
  std::unordered_map<std::string, std::vector<size_t>> index_;
  std::unordered_map<std::string, std::string> types_;
};

// after - before for a counter. A counter that went down was reset (the server restarted),
// so everything counted since is `after`.
double CounterDelta(double before, double after);

// Bucket-wise delta of two scrapes of one histogram (a reset is handled as in CounterDelta).
PromHistogram HistogramDelta(const PromHistogram& before, const PromHistogram& after);

// The q-quantile (0..1) estimated from cumulative buckets by linear interpolation inside a
// bucket, as PromQL's histogram_quantile does. nullopt for an empty histogram.
std::optional<double> HistogramQuantile(const PromHistogram& h, double q);

}  // namespace longhaul::stages
