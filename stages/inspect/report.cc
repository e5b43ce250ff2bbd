#include "stages/inspect/report.h"

#include <sys/stat.h>

#include <cstdio>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::inspect {

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarn:
      return "warn";
    case Severity::kError:
      return "error";
  }
  return "?";
}

Result<Severity> ParseFailOn(std::string_view name) {
  if (name == "warn") return Severity::kWarn;
  if (name == "error") return Severity::kError;
  return absl::InvalidArgumentError(StrCat("--fail-on '", name, "': expected 'warn' or 'error'"));
}

nlohmann::json& Report::Section(const std::string& name) {
  nlohmann::json& s = sections_[name];
  if (!s.is_object()) s = nlohmann::json::object();
  return s;
}

void Report::Add(Severity severity, std::string section, std::string check, std::string text) {
  findings_.push_back({severity, std::move(section), std::move(check), std::move(text)});
}

void Report::Metric(std::string name, double value) {
  for (auto& [n, v] : metrics_) {
    if (n == name) {
      v = value;
      return;
    }
  }
  metrics_.emplace_back(std::move(name), value);
}

int Report::Count(Severity s) const {
  int n = 0;
  for (const Finding& f : findings_) n += f.severity == s;
  return n;
}

bool Report::Fails(Severity threshold) const {
  for (const Finding& f : findings_) {
    if (f.severity >= threshold) return true;
  }
  return false;
}

nlohmann::json Report::ToJson() const {
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [n, v] : metrics_) metrics[n] = v;
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : findings_) {
    findings.push_back({{"severity", SeverityName(f.severity)},
                        {"section", f.section},
                        {"check", f.check},
                        {"text", f.text}});
  }
  return {{"sections", sections_},
          {"metrics", std::move(metrics)},
          {"findings", std::move(findings)},
          {"summary",
           {{"errors", Count(Severity::kError)},
            {"warnings", Count(Severity::kWarn)},
            {"infos", Count(Severity::kInfo)}}}};
}

void Report::Emit(EventWriter& events) const {
  for (const auto& [n, v] : metrics_) events.Metric(n, v);
  events.Metric("findings_error", Count(Severity::kError));
  events.Metric("findings_warn", Count(Severity::kWarn));
  for (const Finding& f : findings_) {
    events.Message(SeverityName(f.severity), StrCat(f.section, ": ", f.check, ": ", f.text));
  }
}

void Report::PrintFindings(std::ostream& out) const {
  out << "\nfindings: " << Count(Severity::kError) << " error(s), " << Count(Severity::kWarn)
      << " warning(s), " << Count(Severity::kInfo) << " note(s)\n";
  // Most severe first; within a severity, in the order they were found.
  for (Severity s : {Severity::kError, Severity::kWarn, Severity::kInfo}) {
    for (const Finding& f : findings_) {
      if (f.severity != s) continue;
      out << "  [" << SeverityName(f.severity) << "] " << f.section << "/" << f.check << ": "
          << f.text << "\n";
    }
  }
}

Status WriteReport(const Report& report, const std::string& path, EventWriter& events) {
  std::string text = report.ToJson().dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  text.push_back('\n');
  RETURN_IF_ERROR(Annotate(WriteFileAtomic(path, text), "write the report"));
  events.Artifact("inspect_report", path, static_cast<int64_t>(text.size()));
  return OkStatus();
}

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace longhaul::inspect
