// Prometheus instruments and the text exposition format (version 0.0.4), shared by longhauld's
// /metrics (daemon/metrics/metrics.h) and longhaul-agent's (agent/lib/agent_metrics.h). One
// thread updates an instrument while /metrics reads it from another: every one is
// thread-safe.
#pragma once

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

// A Prometheus label value as the text format wants it between its quotes: '\', '"' and line
// feeds backslashed. (Not JSON's escaping: core/json_string.h.)
std::string EscapePrometheusLabelValue(const std::string& value);

// Writes the text exposition format: a HELP and TYPE line per family, then its samples.
// Label values are escaped (\\, \", \n); names are the caller's and must be valid.
class TextWriter {
 public:
  void Family(const std::string& name, const std::string& type, const std::string& help);
  void Sample(const std::string& name, const Labels& labels, double value);
  // A family of one sample without labels.
  void Single(const std::string& name, const std::string& type, const std::string& help,
              double value);
  void Write(const std::string& name, const std::string& help, const Histogram& h);
  const std::string& text() const { return out_; }

 private:
  std::string out_;
};

// The Content-Type of TextWriter's text.
inline constexpr char kTextFormatContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// A number as Prometheus reads it: integers without a fraction, NaN, +Inf, -Inf.
std::string FormatValue(double value);

}  // namespace longhaul::metrics
