// What one lh-inspect run found: per-section figures (JSON), metrics, and findings with a
// severity. Rendered three ways: a JSON report file, stage events (one metric per figure, one
// message per finding, the report as an artifact) and human-readable text for stdout.
//
// Findings are observations, not failures: the run's exit code depends on them only through
// FailOn (the --fail-on flag). Not thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/event_writer.h"
#include "core/status.h"

namespace longhaul::inspect {

enum class Severity { kInfo = 0, kWarn = 1, kError = 2 };

std::string_view SeverityName(Severity s);  // "info", "warn", "error"
// "warn" or "error" (the --fail-on values); InvalidArgument otherwise.
Result<Severity> ParseFailOn(std::string_view name);

struct Finding {
  Severity severity = Severity::kInfo;
  std::string section;  // "data", "predictions", "drafter"
  std::string check;    // a stable short name: "template_leak", "output_mismatch", ...
  std::string text;     // one line for people, naming what and where
};

class Report {
 public:
  // A section's figures (free-form JSON object); created empty on first use.
  nlohmann::json& Section(const std::string& name);
  void Add(Severity severity, std::string section, std::string check, std::string text);
  // A figure that is also a stage metric.
  void Metric(std::string name, double value);

  const std::vector<Finding>& findings() const { return findings_; }
  const std::vector<std::pair<std::string, double>>& metrics() const { return metrics_; }
  int Count(Severity s) const;
  // True when a finding at `threshold` or above exists.
  bool Fails(Severity threshold) const;

  // {"sections": {...}, "metrics": {...}, "findings": [...], "summary": {...}}
  nlohmann::json ToJson() const;
  // Metric events, then one message per finding (level = severity); findings_* counts.
  void Emit(EventWriter& events) const;
  // The sections' human summaries are written by the inspectors; this prints the findings.
  void PrintFindings(std::ostream& out) const;

 private:
  nlohmann::json sections_ = nlohmann::json::object();
  std::vector<std::pair<std::string, double>> metrics_;
  std::vector<Finding> findings_;
};

// Writes the report as JSON (atomically), emits the artifact event `inspect_report` for it.
Status WriteReport(const Report& report, const std::string& path, EventWriter& events);

// `v` with `digits` digits after the point, for report texts ("0.153").
std::string Fixed(double v, int digits = 3);

}  // namespace longhaul::inspect
