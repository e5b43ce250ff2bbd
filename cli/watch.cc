#include "cli/watch.h"

#include <cmath>

#include "cli/format.h"
#include "cli/run_view.h"
#include "cli/table.h"
#include "cli/terminal_text.h"
#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::cli {
namespace {

constexpr int kDefaultWidth = 120;
constexpr int kBarWidth = 20;

void JoinNonEmpty(std::string& line, const std::string& part) {
  if (part.empty()) return;
  if (!line.empty()) line += "  ";
  line += part;
}

}  // namespace

std::vector<std::string> RunTracker::Apply(const v1::RunUpdate& update) {
  std::vector<std::string> names;
  names.reserve(update.run().stages_size());
  for (const v1::Stage& s : update.run().stages()) names.push_back(s.name());
  v1::RunUpdate first;
  if (!has_run_ && !update.snapshot()) {
    // Whatever comes first is the whole state known so far.
    first = update;
    first.set_snapshot(true);
  }
  run_.Apply(has_run_ || update.snapshot() ? update : first);
  has_run_ = true;
  return names;
}

WatchRenderer::WatchRenderer(std::ostream& out, const Clock& clock, bool terminal,
                             std::function<int()> width, int64_t progress_interval_ms)
    : out_(out),
      clock_(clock),
      terminal_(terminal),
      width_(std::move(width)),
      progress_interval_ms_(progress_interval_ms) {}

std::string WatchRenderer::Signature(const v1::Stage& s) {
  return StrCat(static_cast<int>(s.status()), "|", s.attempt_count(), "|", s.reason(), "|",
                s.malformed_events());
}

std::string WatchRenderer::DetailSignature(const v1::Stage& s) {
  std::string progress;
  if (s.has_progress()) {
    const v1::Progress& p = s.progress();
    progress = p.total() > 0
                   ? std::to_string(static_cast<int>(std::floor(100 * p.done() / p.total())))
                   : FormatNumber(p.done());
  }
  return StrCat(s.last_message(), "|", progress);
}

std::string WatchRenderer::PlainStageLine(const v1::Stage& s, int64_t now_ms) {
  std::string line = s.name();
  JoinNonEmpty(line, std::string(StageStatusLabel(s.status())));
  if (s.attempt_count() > 0) JoinNonEmpty(line, StrCat("attempt ", s.attempt_count()));
  JoinNonEmpty(line, StageProgress(s));
  if (s.has_progress()) {
    JoinNonEmpty(line, FormatRate(s.progress().rate(), s.progress().unit()));
    if (s.progress().eta_seconds() >= 0 && s.progress().total() > 0 && !IsTerminal(s.status())) {
      JoinNonEmpty(line, StrCat("ETA ", FormatEta(s.progress().eta_seconds())));
    }
  }
  JoinNonEmpty(line, StageReason(s, now_ms));
  if (!s.last_message().empty()) JoinNonEmpty(line, StrCat("- ", s.last_message()));
  if (s.malformed_events() > 0) JoinNonEmpty(line, MalformedWarning(s));
  return TerminalSafe(line);
}

std::vector<std::string> WatchRenderer::Frame(const v1::Run& run, int64_t now_ms, int width) {
  std::vector<std::string> lines;
  std::string header = StrCat("run ", run.id(), "  ", TerminalSafe(run.workflow_name()), "  ",
                              RunStatusName(run.status()));
  int64_t elapsed = RunElapsedMs(run, now_ms);
  if (elapsed >= 0) header += StrCat("  ", FormatDuration(elapsed));
  header += StrCat("  ", StageCountsSummary(run));
  lines.push_back(Truncate(header, width));
  Table table(
      {"STAGE", "STATUS", "PROGRESS", "DONE", "RATE", "ETA", "ELAPSED", "ATTEMPT", "MESSAGE"});
  table.AlignRight(6);
  table.AlignRight(7);
  for (const v1::Stage& s : run.stages()) {
    std::string bar, done, rate, eta;
    if (s.has_progress() && (s.progress().done() > 0 || s.progress().total() > 0)) {
      const v1::Progress& p = s.progress();
      if (p.total() > 0) bar = FormatProgressBar(p.done(), p.total(), kBarWidth);
      done = FormatProgress(p.done(), p.total(), p.unit());
      if (!IsTerminal(s.status())) {
        rate = FormatRate(p.rate(), p.unit());
        if (p.total() > 0) eta = FormatEta(p.eta_seconds());
      }
    }
    std::string message = StageReason(s, now_ms);
    if (!s.last_message().empty()) {
      message = message.empty() ? s.last_message() : StrCat(message, " - ", s.last_message());
    }
    if (s.malformed_events() > 0) {
      message = message.empty() ? MalformedWarning(s) : StrCat(message, " - ", MalformedWarning(s));
    }
    int64_t stage_elapsed = StageElapsedMs(s, now_ms);
    table.AddRow({s.name(), std::string(StageStatusLabel(s.status())), bar, done, rate, eta,
                  stage_elapsed >= 0 ? FormatDuration(stage_elapsed) : "", AttemptText(s),
                  message});
  }
  for (std::string& l : table.Lines(width)) lines.push_back(std::move(l));
  return lines;
}

std::vector<std::string> WatchRenderer::SummaryFrame(const v1::Run& run,
                                                     const std::deque<std::string>& recent,
                                                     int64_t now_ms, int width) {
  std::vector<std::string> lines;
  // The header line needs only these fields and the counts (not a copy of every stage).
  v1::Run head;
  head.set_id(run.id());
  head.set_workflow_name(run.workflow_name());
  head.set_status(run.status());
  head.set_started_at_ms(run.started_at_ms());
  head.set_ended_at_ms(run.ended_at_ms());
  std::map<std::string, int> counts = StageCounts(run);
  for (const auto& [state, n] : counts) (*head.mutable_stage_counts())[state] = n;
  lines.push_back(Frame(head, now_ms, width).front());
  std::string by_state;
  for (const auto& [state, n] : counts) JoinNonEmpty(by_state, StrCat(state, " ", n));
  lines.push_back(Truncate(StrCat("stages: ", by_state), width));
  v1::Run running, failed, changed;
  for (const v1::Stage& s : run.stages()) {
    bool busy = s.status() == v1::STAGE_RUNNING || s.status() == v1::STAGE_STARTING ||
                s.status() == v1::STAGE_SERVING;
    if (busy && running.stages_size() < kSummaryStages) *running.add_stages() = s;
    if (s.status() == v1::STAGE_FAILED && failed.stages_size() < kSummaryStages) {
      *failed.add_stages() = s;
    }
  }
  std::map<std::string, const v1::Stage*> by_name;
  for (const std::string& name : recent) by_name[name] = nullptr;
  for (const v1::Stage& s : run.stages()) {
    auto it = by_name.find(s.name());
    if (it != by_name.end()) it->second = &s;
  }
  for (const std::string& name : recent) {
    if (by_name[name] != nullptr) *changed.add_stages() = *by_name[name];
  }
  for (auto [title, part] : {std::pair{"running", &running}, std::pair{"failed", &failed},
                             std::pair{"recently changed", &changed}}) {
    if (part->stages_size() == 0) continue;
    lines.push_back(Truncate(StrCat(title, ":"), width));
    std::vector<std::string> table = Frame(*part, now_ms, width);
    lines.insert(lines.end(), table.begin() + 1, table.end());
  }
  return lines;
}

void WatchRenderer::NoteRecent(const std::vector<std::string>& stages) {
  for (const std::string& name : stages) {
    std::erase(recent_, name);
    recent_.push_front(name);
    if (static_cast<int>(recent_.size()) > kSummaryStages) recent_.pop_back();
  }
}

void WatchRenderer::OnUpdate(const v1::RunUpdate& update) {
  std::vector<std::string> stages = tracker_.Apply(update);
  bool part_of_snapshot = update.snapshot() || loading_snapshot_;
  loading_snapshot_ = update.snapshot() ? !update.snapshot_complete()
                                        : loading_snapshot_ && !update.snapshot_complete();
  if (!part_of_snapshot) NoteRecent(stages);
  if (terminal_) {
    Redraw();
    return;
  }
  if (big()) {
    PrintPlainSummary(part_of_snapshot ? std::vector<std::string>() : stages);
    return;
  }
  if (update.snapshot()) {
    // Everything in a snapshot is news to a fresh watcher, and old news after a reconnect.
    std::vector<std::string> all;
    for (const v1::Stage& s : run().stages()) all.push_back(s.name());
    stages = all;
  }
  PrintPlainChanges(stages);
}

void WatchRenderer::PrintPlainChanges(const std::vector<std::string>& stages) {
  int64_t now = clock_.NowMs();
  std::string prefix = FormatClockTime(now);
  const v1::Run& r = run();
  if (r.status() != last_run_status_) {
    last_run_status_ = r.status();
    out_ << prefix << "  run " << r.id() << "  " << r.workflow_name() << "  "
         << RunStatusName(r.status()) << '\n';
  }
  for (const std::string& name : stages) {
    const v1::Stage* s = tracker_.Find(name);
    if (s == nullptr) continue;
    std::string sig = Signature(*s);
    std::string detail = DetailSignature(*s);
    auto it = printed_.find(name);
    if (it != printed_.end() && it->second == sig) {
      // Only progress or the message may have changed: at most a line per interval.
      const Detail& last = detail_[name];
      if (last.signature == detail || now - last.printed_ms < progress_interval_ms_) continue;
    }
    printed_[name] = sig;
    detail_[name] = {detail, now};
    out_ << prefix << "  " << PlainStageLine(*s, now) << '\n';
  }
  out_.flush();
}

void WatchRenderer::PrintPlainSummary(const std::vector<std::string>& stages) {
  int64_t now = clock_.NowMs();
  std::string prefix = FormatClockTime(now);
  const v1::Run& r = run();
  bool status_changed = r.status() != last_run_status_;
  // Stages that failed in this update, each once, then the counts at most once a second.
  for (const std::string& name : stages) {
    const v1::Stage* s = tracker_.Find(name);
    if (s == nullptr || s->status() != v1::STAGE_FAILED) continue;
    std::string sig = Signature(*s);
    auto it = printed_.find(name);
    if (it != printed_.end() && it->second == sig) continue;
    printed_[name] = sig;
    out_ << prefix << "  " << PlainStageLine(*s, now) << '\n';
  }
  // A snapshot still coming in is not news yet; a changed state is, and new counts once a second.
  if (loading_snapshot_) return;
  std::string counts = StageCountsSummary(r);
  if (status_changed || (counts != last_counts_ && now - last_counts_ms_ >= 1000)) {
    PrintCountsLine(counts);
  }
  out_.flush();
}

void WatchRenderer::PrintCountsLine(const std::string& counts) {
  const v1::Run& r = run();
  out_ << FormatClockTime(clock_.NowMs()) << "  run " << r.id() << "  " << r.workflow_name() << "  "
       << RunStatusName(r.status()) << "  " << counts << '\n';
  last_run_status_ = r.status();
  last_counts_ = counts;
  last_counts_ms_ = clock_.NowMs();
}

void WatchRenderer::Redraw() {
  if (!terminal_ || !tracker_.has_run()) return;
  int width = width_ ? width_() : 0;
  if (width <= 0) width = kDefaultWidth;
  // One column less than the terminal, so that no line wraps and the cursor arithmetic holds.
  std::vector<std::string> lines = big() ? SummaryFrame(run(), recent_, clock_.NowMs(), width - 1)
                                         : Frame(run(), clock_.NowMs(), width - 1);
  std::string buf;
  if (lines_drawn_ > 0) buf += StrCat("\r\x1b[", lines_drawn_, "A");
  for (const std::string& l : lines) buf += StrCat(l, "\x1b[K\n");
  buf += "\x1b[J";
  out_ << buf;
  out_.flush();
  lines_drawn_ = static_cast<int>(lines.size());
}

void WatchRenderer::Finish() {
  if (!tracker_.has_run()) return;
  if (terminal_) Redraw();
  const v1::Run& r = run();
  if (!terminal_ && big()) {
    std::string counts = StageCountsSummary(r);
    if (counts != last_counts_) PrintCountsLine(counts);  // the counts as the run ended
  }
  int64_t elapsed = RunElapsedMs(r, clock_.NowMs());
  std::string line = StrCat("run ", r.id(), " ", RunStatusName(r.status()));
  if (elapsed >= 0) {
    line += StrCat(r.status() == v1::RUN_SUCCEEDED ? " in " : " after ", FormatDuration(elapsed));
  }
  if (!r.reason().empty()) line += StrCat(": ", TerminalSafe(r.reason()));
  out_ << line << '\n';
  out_.flush();
}

}  // namespace longhaul::cli
