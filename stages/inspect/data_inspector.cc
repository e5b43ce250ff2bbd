#include "stages/inspect/data_inspector.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "core/fs.h"
#include "core/strings.h"
#include "stages/bench/stats.h"
#include "stages/common/jsonl.h"
#include "stages/inspect/record_reader.h"

namespace longhaul::inspect {
namespace {

using nlohmann::json;
using stages::Conversation;

int64_t Words(std::string_view s) {
  int64_t n = 0;
  bool in_word = false;
  for (char c : s) {
    bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

bool Blank(std::string_view s) { return StripWhitespace(s).empty(); }

std::string Percent(double num, double den) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", den > 0 ? 100.0 * num / den : 0.0);
  return buf;
}

std::string Shorten(std::string_view s, size_t n = 120) {
  std::string out(s.substr(0, n));
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (s.size() > n) out += "...";
  return out;
}

// Where a sample came from, for findings: "samples.jsonl:12 (id s7)".
std::string At(const std::string& where, const std::string& id) {
  return StrCat(where, " (id ", id, ")");
}

struct MarkerHits {
  int64_t answers = 0, reasoning = 0, prompts = 0;
  std::string first_answer, first_prompt;  // where it was first seen
};

struct DupIndex {
  std::unordered_map<size_t, std::string> first;  // hash -> where first seen
  int64_t repeats = 0;                            // samples whose key was seen before
  std::string example;                            // "X repeats Y"
  void Add(const std::string& key, const std::string& where) {
    auto [it, fresh] = first.emplace(std::hash<std::string>{}(key), where);
    if (fresh) return;
    if (repeats++ == 0) example = StrCat(where, " repeats ", it->second);
  }
};

class DataScan {
 public:
  DataScan(const DataOptions& o, std::vector<std::string> markers)
      : o_(o), markers_(std::move(markers)), hits_(markers_.size()) {}

  void Malformed(std::string where, std::string why) {
    if (malformed_.size() < o_.max_listed) malformed_.push_back({{"where", where}, {"error", why}});
    ++malformed_count_;
  }

  void Sample(const Conversation& c, const std::string& where) {
    ++samples_;
    std::string at = At(where, c.id);
    ids_.Add(c.id, at);
    int last = -1;
    for (int i = 0; i < static_cast<int>(c.messages.size()); ++i) {
      if (c.messages[i].role == "assistant") last = i;
    }
    bool empty = false;
    bool leak = false;
    for (size_t m = 0; m < markers_.size(); ++m) {
      bool in_answer = false, in_reasoning = false, in_prompt = false;
      for (const auto& msg : c.messages) {
        bool found = msg.content.find(markers_[m]) != std::string::npos;
        if (msg.role == "assistant") {
          in_answer |= found;
          in_reasoning |= msg.reasoning.find(markers_[m]) != std::string::npos;
        } else {
          in_prompt |= found;
        }
      }
      in_reasoning |= c.reasoning.find(markers_[m]) != std::string::npos;
      MarkerHits& h = hits_[m];
      h.answers += in_answer;
      h.reasoning += in_reasoning;
      h.prompts += in_prompt;
      if ((in_answer || in_reasoning) && h.first_answer.empty()) {
        h.first_answer = StrCat(at, in_answer ? ", in the answer" : ", in the reasoning");
      }
      if (in_prompt && h.first_prompt.empty()) h.first_prompt = at;
      leak |= in_answer || in_reasoning;
    }
    leaking_samples_ += leak;
    for (const auto& msg : c.messages) {
      if (msg.role == "assistant" && Blank(msg.content)) empty = true;
    }
    if (last < 0) {
      ++missing_;
      if (first_missing_.empty()) first_missing_ = at;
      return;
    }
    const auto& answer = c.messages[last];
    std::string reasoning = !answer.reasoning.empty() ? answer.reasoning : c.reasoning;
    if (empty) {
      ++empty_;
      if (first_empty_.empty()) first_empty_ = at;
      if (Blank(answer.content) && !Blank(reasoning)) ++reasoning_only_;
    }
    bool has_reasoning = !Blank(reasoning);
    for (const auto& msg : c.messages) has_reasoning |= !Blank(msg.reasoning);
    with_reasoning_ += has_reasoning;

    std::string prompt_key;
    int64_t prompt_words = 0;
    for (int i = 0; i < last; ++i) {
      prompt_key += StrCat(c.messages[i].role, "\x1f", c.messages[i].content, "\x1e");
      prompt_words += Words(c.messages[i].content);
    }
    prompts_.Add(prompt_key, at);
    if (!Blank(answer.content)) answers_.Add(answer.content, at);
    prompt_words_.push_back(static_cast<double>(prompt_words));
    answer_words_.push_back(static_cast<double>(Words(answer.content)));
    if (has_reasoning) reasoning_words_.push_back(static_cast<double>(Words(reasoning)));
  }

  void Failed(const json& record, const std::string& where) {
    ++failed_;
    std::string error = "(no error text)";
    if (record.is_object() && record.contains("error") && record["error"].is_string()) {
      error = Shorten(record["error"].get<std::string>());
    }
    ++failed_errors_[error];
    (void)where;
  }

  void Finish(const std::string& samples_file, const std::string& failed_file, Report& report,
              std::ostream& out);

 private:
  const DataOptions& o_;
  std::vector<std::string> markers_;
  std::vector<MarkerHits> hits_;
  int64_t samples_ = 0, missing_ = 0, empty_ = 0, reasoning_only_ = 0, with_reasoning_ = 0;
  int64_t leaking_samples_ = 0, failed_ = 0, malformed_count_ = 0;
  std::string first_missing_, first_empty_;
  json malformed_ = json::array();
  std::map<std::string, int64_t> failed_errors_;
  DupIndex ids_, prompts_, answers_;
  std::vector<double> prompt_words_, answer_words_, reasoning_words_;
};

json WordsJson(const stages::Summary& s) {
  if (s.count == 0) return nullptr;
  return {{"count", s.count}, {"p50", s.p50}, {"p90", s.p90}, {"max", s.max}, {"mean", s.mean}};
}

void DataScan::Finish(const std::string& samples_file, const std::string& failed_file,
                      Report& report, std::ostream& out) {
  const std::string S = "data";
  json& sec = report.Section(S);
  stages::Summary pw = stages::Summarize(prompt_words_), aw = stages::Summarize(answer_words_),
                  rw = stages::Summarize(reasoning_words_);
  double capture = samples_ > 0 ? static_cast<double>(with_reasoning_) / samples_ : 0;
  double attempted = static_cast<double>(samples_ + failed_);
  sec["samples_file"] = samples_file;
  sec["failed_file"] = failed_file.empty() ? json(nullptr) : json(failed_file);
  sec["samples"] = samples_;
  sec["malformed_lines"] = malformed_count_;
  sec["malformed"] = malformed_;
  sec["missing_answers"] = missing_;
  sec["empty_answers"] = empty_;
  sec["reasoning_only_answers"] = reasoning_only_;
  sec["failed_samples"] = failed_;
  json errors = json::array();
  std::vector<std::pair<int64_t, std::string>> by_count;
  for (const auto& [e, n] : failed_errors_) by_count.emplace_back(n, e);
  std::sort(by_count.rbegin(), by_count.rend());
  for (const auto& [n, e] : by_count) errors.push_back({{"error", e}, {"count", n}});
  sec["failed_errors"] = errors;
  sec["samples_with_reasoning"] = with_reasoning_;
  sec["reasoning_capture_rate"] = capture;
  sec["words"] = {
      {"prompt", WordsJson(pw)}, {"answer", WordsJson(aw)}, {"reasoning", WordsJson(rw)}};
  json markers = json::array();
  for (size_t m = 0; m < markers_.size(); ++m) {
    const MarkerHits& h = hits_[m];
    if (h.answers + h.reasoning + h.prompts == 0) continue;
    markers.push_back({{"marker", markers_[m]},
                       {"answers", h.answers},
                       {"reasoning", h.reasoning},
                       {"prompts", h.prompts},
                       {"first_in_answer", h.first_answer},
                       {"first_in_prompt", h.first_prompt}});
  }
  sec["template_markers_checked"] = markers_;
  sec["template_markers"] = markers;
  sec["samples_with_template_leak"] = leaking_samples_;
  sec["duplicates"] = {{"ids", ids_.repeats},
                       {"prompts", prompts_.repeats},
                       {"answers", answers_.repeats},
                       {"id_example", ids_.example},
                       {"prompt_example", prompts_.example},
                       {"answer_example", answers_.example}};

  report.Metric("samples", static_cast<double>(samples_));
  report.Metric("malformed_lines", static_cast<double>(malformed_count_));
  report.Metric("empty_answers", static_cast<double>(empty_));
  report.Metric("missing_answers", static_cast<double>(missing_));
  report.Metric("failed_samples", static_cast<double>(failed_));
  report.Metric("reasoning_capture_rate", capture);
  for (auto [name, s] :
       {std::pair{"prompt", &pw}, std::pair{"answer", &aw}, std::pair{"reasoning", &rw}}) {
    if (s->count == 0) continue;
    report.Metric(StrCat(name, "_words_p50"), s->p50);
    report.Metric(StrCat(name, "_words_p90"), s->p90);
    report.Metric(StrCat(name, "_words_max"), s->max);
  }
  report.Metric("template_leak_samples", static_cast<double>(leaking_samples_));
  report.Metric("duplicate_ids", static_cast<double>(ids_.repeats));
  report.Metric("duplicate_prompts", static_cast<double>(prompts_.repeats));
  report.Metric("duplicate_answers", static_cast<double>(answers_.repeats));

  // Findings.
  for (const json& m : malformed_) {
    report.Add(Severity::kError, S, "malformed_line",
               StrCat(m["where"].get<std::string>(), ": ", m["error"].get<std::string>()));
  }
  if (malformed_count_ > static_cast<int64_t>(malformed_.size())) {
    report.Add(Severity::kError, S, "malformed_line",
               StrCat("and ", malformed_count_ - static_cast<int64_t>(malformed_.size()),
                      " more malformed lines (", malformed_count_, " in all)"));
  }
  if (samples_ == 0) {
    report.Add(Severity::kError, S, "no_samples", StrCat(samples_file, " holds no usable sample"));
  }
  if (missing_ > 0) {
    report.Add(Severity::kWarn, S, "missing_answer",
               StrCat(missing_, " of ", samples_,
                      " samples have no assistant turn (first: ", first_missing_, ")"));
  }
  if (empty_ > 0) {
    std::string why = reasoning_only_ > 0
                          ? StrCat("; ", reasoning_only_,
                                   " of them end inside the reasoning (max_tokens too low?)")
                          : "";
    report.Add(Severity::kWarn, S, "empty_answer",
               StrCat(empty_, " of ", samples_, " samples (", Percent(empty_, samples_),
                      ") have an empty answer (first: ", first_empty_, ")", why));
  }
  if (failed_ > 0) {
    report.Add(Severity::kWarn, S, "failed_samples",
               StrCat(failed_, " samples failed generation (", Percent(failed_, attempted),
                      " of those attempted, ", failed_file, "); most common error (",
                      by_count[0].first, "x): ", by_count[0].second));
  }
  for (size_t m = 0; m < markers_.size(); ++m) {
    const MarkerHits& h = hits_[m];
    if (h.answers + h.reasoning > 0) {
      report.Add(Severity::kWarn, S, "template_leak",
                 StrCat("chat-template marker '", markers_[m], "' appears in ", h.answers,
                        " answers and ", h.reasoning, " reasoning texts (first: ", h.first_answer,
                        "): the template or reasoning parser of generation and training differ"));
    }
    if (h.prompts > 0) {
      report.Add(Severity::kInfo, S, "template_marker_in_prompt",
                 StrCat("chat-template marker '", markers_[m], "' appears in ", h.prompts,
                        " prompts (first: ", h.first_prompt, ")"));
    }
  }
  if (ids_.repeats > 0) {
    report.Add(Severity::kWarn, S, "duplicate_id",
               StrCat(ids_.repeats, " samples repeat an earlier id (", ids_.example, ")"));
  }
  for (auto [what, idx] : {std::pair{"prompt", &prompts_}, std::pair{"answer", &answers_}}) {
    if (idx->repeats == 0) continue;
    double frac = samples_ > 0 ? static_cast<double>(idx->repeats) / samples_ : 0;
    report.Add(frac > o_.max_duplicate_fraction ? Severity::kWarn : Severity::kInfo, S,
               StrCat("duplicate_", what),
               StrCat(idx->repeats, " samples (", Percent(idx->repeats, samples_),
                      ") repeat an earlier ", what, " (", idx->example, ")"));
  }

  // Human-readable summary.
  char buf[256];
  out << "data: " << samples_file << "\n";
  out << "  samples             " << samples_ << "  (malformed lines " << malformed_count_
      << ", failed " << failed_ << (failed_file.empty() ? "" : " in " + failed_file) << ")\n";
  out << "  missing answers     " << missing_ << "\n";
  out << "  empty answers       " << empty_ << " (" << Percent(empty_, samples_)
      << "), ending inside the reasoning " << reasoning_only_ << "\n";
  out << "  reasoning captured  " << with_reasoning_ << " of " << samples_ << " ("
      << Percent(with_reasoning_, samples_) << ")\n";
  out << "  words                 p50       p90       max\n";
  for (auto [name, s] :
       {std::pair{"prompt", &pw}, std::pair{"answer", &aw}, std::pair{"reasoning", &rw}}) {
    if (s->count == 0) {
      std::snprintf(buf, sizeof buf, "    %-16s %9s %9s %9s\n", name, "-", "-", "-");
    } else {
      std::snprintf(buf, sizeof buf, "    %-16s %9.0f %9.0f %9.0f\n", name, s->p50, s->p90, s->max);
    }
    out << buf;
  }
  out << "  duplicates          ids " << ids_.repeats << ", prompts " << prompts_.repeats
      << ", answers " << answers_.repeats << "\n";
  out << "  template markers    ";
  if (markers.empty()) out << "none found";
  for (const json& m : markers) {
    out << m["marker"].get<std::string>() << " (answers " << m["answers"] << ", reasoning "
        << m["reasoning"] << ", prompts " << m["prompts"] << ")  ";
  }
  out << "\n";
}

}  // namespace

std::vector<std::string> DefaultTemplateMarkers() {
  return {"<|im_start|>",  "<|im_end|>", "<|assistant|>", "<|user|>",
          "<|system|>",    "<|end|>",    "<|eot_id|>",    "<|start_header_id|>",
          "<|endoftext|>", "<think>",    "</think>",      "[INST]",
          "[/INST]"};
}

Status InspectData(const DataOptions& o, Report& report, std::ostream& out) {
  std::vector<std::string> markers =
      o.template_markers.empty() ? DefaultTemplateMarkers() : o.template_markers;
  if (o.samples.empty()) return absl::InvalidArgumentError("--samples is required");
  if (!PathExists(o.samples)) {
    return absl::NotFoundError(StrCat("--samples ", o.samples, ": no such file"));
  }
  std::string failed = o.failed;
  if (failed.empty()) {
    std::string base = o.samples;
    if (EndsWith(base, ".jsonl")) base.resize(base.size() - 6);
    if (PathExists(base + ".failed.jsonl")) failed = base + ".failed.jsonl";
  } else if (!PathExists(failed)) {
    return absl::NotFoundError(StrCat("--failed ", failed, ": no such file"));
  }
  DataScan scan(o, markers);
  size_t index = 0;
  auto bad = [&](const std::string& where, const std::string& why) { scan.Malformed(where, why); };
  RETURN_IF_ERROR(ForEachJsonRecord(
      o.samples,
      [&](const json& doc, const std::string& where) {
        auto c = stages::ParseConversation(doc, where, index++);
        if (!c.ok()) {
          // ParseConversation's message already starts with `where`.
          std::string msg = ToStd(c.status().message());
          if (StartsWith(msg, where + ": ")) msg = msg.substr(where.size() + 2);
          scan.Malformed(where, msg);
          return;
        }
        scan.Sample(*c, where);
      },
      bad));
  if (!failed.empty()) {
    RETURN_IF_ERROR(ForEachJsonRecord(
        failed, [&](const json& doc, const std::string& where) { scan.Failed(doc, where); }, bad));
  }
  scan.Finish(o.samples, failed, report, out);
  return OkStatus();
}

}  // namespace longhaul::inspect
