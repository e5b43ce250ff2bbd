#include "stages/command/output_scanner.h"

#include <cmath>
#include <cstdlib>

#include "core/strings.h"

namespace longhaul::command {
namespace {

Result<std::regex> Compile(std::string_view flag, const std::string& pattern, size_t min_groups) {
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(StrCat(flag, " '", pattern, "': ", e.what()));
  }
  if (re.mark_count() < min_groups) {
    return absl::InvalidArgumentError(StrCat(flag, " '", pattern, "': needs ", min_groups,
                                             " capture group", min_groups > 1 ? "s" : "",
                                             " (the value to read)"));
  }
  return re;
}

// The number in a capture group: the whole group must be one finite number.
std::optional<double> Number(const std::csub_match& m) {
  if (!m.matched) return std::nullopt;
  std::string s = m.str();
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Lines this long are progress bars gone wrong or data dumps; regexes stay on the front.
constexpr size_t kMaxScanned = 8192;

}  // namespace

Result<OutputScanner> OutputScanner::Create(const ScanPatterns& p, const Clock* clock) {
  OutputScanner s;
  s.clock_ = clock;
  s.p_ = p;
  s.unit_ = p.progress_unit;
  if (!p.progress.empty()) {
    ASSIGN_OR_RETURN(s.progress_, Compile("--progress-pattern", p.progress, 1));
  }
  if (!p.epoch.empty()) {
    ASSIGN_OR_RETURN(s.epoch_, Compile("--epoch-pattern", p.epoch, 1));
  }
  if (!p.loss.empty()) {
    ASSIGN_OR_RETURN(std::regex re, Compile("--loss-pattern", p.loss, 1));
    s.rules_.push_back({"loss", std::move(re)});
  }
  for (const std::string& spec : p.metrics) {
    size_t eq = spec.find('=');
    std::string name = eq == std::string::npos ? "" : spec.substr(0, eq);
    if (name.empty() || name.find_first_of(" \t") != std::string::npos) {
      return absl::InvalidArgumentError(
          StrCat("--metric-pattern '", spec, "': expected NAME=REGEX"));
    }
    ASSIGN_OR_RETURN(std::regex re,
                     Compile(StrCat("--metric-pattern ", name), spec.substr(eq + 1), 1));
    s.rules_.push_back({name, std::move(re)});
  }
  return s;
}

std::optional<double> OutputScanner::last_loss() const {
  auto it = metrics_.find("loss");
  if (it == metrics_.end()) return std::nullopt;
  return it->second.value;
}

void OutputScanner::Metric(const std::string& name, double value, std::optional<int64_t> step,
                           EventWriter& events) {
  Pending& m = metrics_[name];
  m.value = value;
  m.step = step;
  int64_t now = clock_->NowMs();
  if (m.last_emit_ms >= 0 && now - m.last_emit_ms < p_.min_interval_ms) {
    m.pending = true;
    return;
  }
  events.Metric(name, value, step);
  m.last_emit_ms = now;
  m.pending = false;
}

void OutputScanner::Progress(EventWriter& events, bool force) {
  if (!done_) return;
  int64_t now = clock_->NowMs();
  if (!force && progress_emit_ms_ >= 0 && now - progress_emit_ms_ < p_.min_interval_ms) {
    progress_pending_ = true;
    return;
  }
  events.Progress(*done_, total_, unit_);
  progress_emit_ms_ = now;
  progress_pending_ = false;
}

void OutputScanner::ScanLine(std::string_view full, EventWriter& events) {
  std::string_view line = full.substr(0, kMaxScanned);
  std::cmatch m;
  const char* b = line.data();
  const char* e = line.data() + line.size();
  if (progress_ && std::regex_search(b, e, m, *progress_)) {
    auto done = Number(m[1]);
    if (done) {
      ++matches_;
      bool changed = !done_ || *done_ != *done;
      done_ = done;
      unit_ = p_.progress_unit;
      if (m.size() > 2) {
        if (auto total = Number(m[2])) total_ = total;
      }
      if (changed) Progress(events, false);
    }
  }
  if (epoch_ && std::regex_search(b, e, m, *epoch_)) {
    if (auto epoch = Number(m[1])) {
      ++matches_;
      Metric("epoch", *epoch, static_cast<int64_t>(*epoch), events);
      // Without a progress pattern, epochs are the progress.
      if (!progress_ && m.size() > 2) {
        if (auto total = Number(m[2])) {
          bool changed = !done_ || *done_ != *epoch;
          done_ = *epoch;
          total_ = total;
          unit_ = "epochs";
          if (changed) Progress(events, false);
        }
      }
    }
  }
  for (const MetricRule& r : rules_) {
    if (!std::regex_search(b, e, m, r.re)) continue;
    auto v = Number(m[1]);
    if (!v) continue;
    ++matches_;
    std::optional<int64_t> step;
    if (r.name == "loss") ++loss_lines_;
    // The step is the progress count when progress is tracked, else the match's ordinal.
    if (progress_ && done_) {
      step = static_cast<int64_t>(*done_);
    } else if (r.name == "loss") {
      step = loss_lines_;
    }
    Metric(r.name, *v, step, events);
  }
}

void OutputScanner::Flush(EventWriter& events) {
  if (progress_pending_) Progress(events, true);
  for (auto& [name, m] : metrics_) {
    if (!m.pending) continue;
    events.Metric(name, m.value, m.step);
    m.pending = false;
    m.last_emit_ms = clock_->NowMs();
  }
}

}  // namespace longhaul::command
