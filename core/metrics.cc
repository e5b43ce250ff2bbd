#include "core/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace longhaul::metrics {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[i];
  sum_ += value;
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.bounds = bounds_;
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t total = 0;
  for (uint64_t c : counts_) {
    total += c;
    s.cumulative.push_back(total);
  }
  s.sum = sum_;
  s.count = total;
  return s;
}

void LabeledCounter::Add(const std::string& label_value, uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  values_[label_value] += n;
}

std::map<std::string, uint64_t> LabeledCounter::Read() const {
  std::lock_guard<std::mutex> lock(mu_);
  return values_;
}

void LabeledCounter2::Add(const std::string& first, const std::string& second, uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  values_[{first, second}] += n;
}

std::map<std::pair<std::string, std::string>, uint64_t> LabeledCounter2::Read() const {
  std::lock_guard<std::mutex> lock(mu_);
  return values_;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", value);
  } else {
    // The shortest form that reads back as the same double (0.1, not 0.10000000000000001).
    for (int precision = 1; precision <= 17; ++precision) {
      std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
      if (std::strtod(buf, nullptr) == value) break;
    }
  }
  return buf;
}

namespace {

// Backslash and newline escaped; a label value also escapes its quote, help text does not.
std::string EscapePrometheusText(const std::string& v, bool label) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && label) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string EscapePrometheusLabelValue(const std::string& value) {
  return EscapePrometheusText(value, /*label=*/true);
}

void TextWriter::Family(const std::string& name, const std::string& type, const std::string& help) {
  out_ += "# HELP " + name + " " + EscapePrometheusText(help, /*label=*/false) + "\n";
  out_ += "# TYPE " + name + " " + type + "\n";
}

void TextWriter::Sample(const std::string& name, const Labels& labels, double value) {
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out_ += ',';
      out_ += labels[i].first + "=\"" + EscapePrometheusLabelValue(labels[i].second) + "\"";
    }
    out_ += '}';
  }
  out_ += ' ';
  out_ += FormatValue(value);
  out_ += '\n';
}

void TextWriter::Single(const std::string& name, const std::string& type, const std::string& help,
                        double value) {
  Family(name, type, help);
  Sample(name, {}, value);
}

void TextWriter::Write(const std::string& name, const std::string& help, const Histogram& h) {
  Histogram::Snapshot s = h.Read();
  Family(name, "histogram", help);
  for (size_t i = 0; i < s.bounds.size(); ++i) {
    Sample(name + "_bucket", {{"le", FormatValue(s.bounds[i])}},
           static_cast<double>(s.cumulative[i]));
  }
  Sample(name + "_bucket", {{"le", "+Inf"}}, static_cast<double>(s.count));
  Sample(name + "_sum", {}, s.sum);
  Sample(name + "_count", {}, static_cast<double>(s.count));
}

}  // namespace longhaul::metrics
