#include "cli/stage_view.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "cli/format.h"
#include "cli/run_view.h"
#include "cli/terminal_text.h"
#include "core/strings.h"
#include "daemon/workflow/cache_key.h"
#include "proto/state_names.h"

namespace longhaul::cli {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

// "  label:  value" lines with the values lined up; `indent` spaces first. Labels and values
// (param names, env, outputs) are shown terminal-safe.
std::string LabelLines(const Pairs& raw, int indent, const char* separator = ":") {
  Pairs pairs;
  for (const auto& [label, value] : raw)
    pairs.emplace_back(TerminalSafe(label), TerminalSafe(value));
  size_t width = 0;
  for (const auto& [label, value] : pairs) width = std::max(width, label.size());
  std::string out;
  for (const auto& [label, value] : pairs) {
    std::string head = StrCat(label, separator);
    out += StrCat(std::string(indent, ' '), head,
                  std::string(width + 2 + std::string(separator).size() - head.size(), ' '), value,
                  "\n");
  }
  return out;
}

std::string MapLines(const std::map<std::string, std::string>& m, int indent) {
  if (m.empty()) return StrCat(std::string(indent, ' '), "(none)\n");
  Pairs pairs(m.begin(), m.end());
  return LabelLines(pairs, indent, "");
}

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

std::string ReusedFrom(const v1::Stage& stage) {
  if (stage.cached_from_run_id() <= 0) return "";
  std::string from = StrCat("run ", stage.cached_from_run_id());
  if (!stage.cached_from_stage().empty() && stage.cached_from_stage() != stage.name()) {
    from += StrCat(", stage ", stage.cached_from_stage());
  }
  return from;
}

std::string FingerprintText(const std::string& json) {
  if (json.empty()) return "  what went into the key: not recorded\n";
  Result<workflow::StageFingerprint> fp = workflow::ParseFingerprintJson(json);
  if (!fp.ok()) {
    return StrCat("  what went into the key: cannot read it: ", ToStd(fp.status().message()),
                  "\n    ", json, "\n");
  }
  std::string out = "  what went into the key (SHA-256 of these, in order):\n";
  out += StrCat("    1. its definition as written (hash ", fp->definition_hash, "):\n");
  if (fp->definition) {
    const workflow::StageDefinition& d = *fp->definition;
    Pairs def = {{"kind", d.kind}, {"run", ShellJoin(d.run)}};
    std::vector<std::string> env;
    for (const auto& [k, v] : d.env) env.push_back(StrCat(k, "=", v));
    def.emplace_back("env", env.empty() ? "-" : ShellJoin(env));
    def.emplace_back("cache_version", d.cache_version.empty() ? "-" : d.cache_version);
    out += LabelLines(def, 7);
  } else {
    out += "       (not recorded: the stage was submitted by an older longhauld)\n";
  }
  out += "    2. the params its templates use, with their values:\n";
  out += MapLines(fp->params, 7);
  out += "    3. the keys of the stages it needs:\n";
  out += MapLines(fp->upstream, 7);
  out +=
      "  not in the key: upstream outputs, ${output_dir}, ${run.id}, ${workflow.dir}, resources, "
      "retry, timeouts, grace, description\n";
  return out;
}

}  // namespace

std::string StageHeaderText(const v1::Run& run, const v1::Stage& stage, int64_t now_ms,
                            bool with_plan) {
  Pairs pairs;
  if (!stage.description().empty()) pairs.emplace_back("about", stage.description());
  pairs.emplace_back("kind", stage.kind().empty() ? "task" : stage.kind());
  std::string status(StageStatusLabel(stage.status()));
  std::string reason = StageReason(stage, now_ms);
  if (!reason.empty()) status += StrCat(": ", reason);
  pairs.emplace_back("status", status);
  std::vector<std::string> needs(stage.needs().begin(), stage.needs().end());
  pairs.emplace_back("needs", needs.empty() ? "-" : StrJoin(needs, ", "));
  if (stage.attempt_count() > 0) {
    pairs.emplace_back("attempt",
                       StrCat(AttemptText(stage),
                              stage.agent_id().empty() ? "" : StrCat(" on ", stage.agent_id())));
  }
  // Waiting again (a retry, a preemption): how the attempt before ended.
  if (std::string last = LastAttemptEndText(stage); !last.empty() && !IsTerminal(stage.status())) {
    pairs.emplace_back("previous", last);
  }
  std::string progress = StageProgress(stage);
  if (!progress.empty()) pairs.emplace_back("progress", progress);
  if (!stage.last_message().empty()) {
    const std::string& level = stage.last_message_level();
    bool plain = level.empty() || level == "info" || level == "debug";
    pairs.emplace_back("message", StrCat(plain ? "" : StrCat(level, ": "), stage.last_message()));
  }
  if (stage.started_at_ms() > 0)
    pairs.emplace_back("started", FormatLocalTime(stage.started_at_ms()));
  if (stage.ended_at_ms() > 0) {
    std::string ended = FormatLocalTime(stage.ended_at_ms());
    int64_t elapsed = StageElapsedMs(stage, now_ms);
    if (elapsed >= 0) ended += StrCat("  (took ", FormatDuration(elapsed), ")");
    pairs.emplace_back("ended", ended);
  }
  if (with_plan && !stage.plan_action().empty()) {
    pairs.emplace_back("plan", stage.plan_reason().empty()
                                   ? stage.plan_action()
                                   : StrCat(stage.plan_action(), ": ", stage.plan_reason()));
  }
  if (with_plan && !stage.cache_key().empty()) pairs.emplace_back("cache key", stage.cache_key());
  std::string warning = MalformedWarning(stage);
  if (!warning.empty()) pairs.emplace_back("events", warning);
  return StrCat("run ", run.id(), ", stage ", stage.name(), "\n", LabelLines(pairs, 2));
}

std::string WhyText(const v1::Stage& stage) {
  Pairs pairs;
  if (stage.plan_action().empty()) {
    pairs.emplace_back("plan", "not recorded");
  } else {
    pairs.emplace_back("plan", StrCat(stage.plan_action(), ": ", OrDash(stage.plan_reason())));
  }
  std::string from = ReusedFrom(stage);
  if (!from.empty()) pairs.emplace_back("reused from", from);
  pairs.emplace_back("cache key", OrDash(stage.cache_key()));
  return StrCat("why:\n", LabelLines(pairs, 2), FingerprintText(stage.fingerprint()));
}

}  // namespace longhaul::cli
