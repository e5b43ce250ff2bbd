#include "stages/common/prometheus.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/strings.h"

namespace longhaul::stages {
namespace {

bool NameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool NameChar(char c) { return NameStart(c) || (c >= '0' && c <= '9'); }

// Parses a sample value: floats, "NaN", "+Inf", "-Inf", "Inf".
std::optional<double> ParseValue(std::string_view s) {
  if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "+Inf" || s == "Inf" || s == "+inf" || s == "inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (s == "-Inf" || s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s.empty()) return std::nullopt;
  // strtod needs a terminated string; values are short.
  std::string buf(s);
  char* end = nullptr;
  double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return std::nullopt;
  return v;
}

bool Includes(const PromLabels& labels, const PromLabels& match) {
  for (const auto& m : match) {
    auto it = std::find_if(labels.begin(), labels.end(),
                           [&](const auto& l) { return l.first == m.first; });
    if (it == labels.end() || it->second != m.second) return false;
  }
  return true;
}

std::string_view LabelValue(const PromLabels& labels, std::string_view name) {
  for (const auto& l : labels) {
    if (l.first == name) return l.second;
  }
  return {};
}

class LineParser {
 public:
  LineParser(std::string_view line, int line_no) : s_(line), line_no_(line_no) {}

  Result<PromSample> Sample() {
    PromSample out;
    size_t start = pos_;
    if (pos_ >= s_.size() || !NameStart(s_[pos_])) return Bad("expected a metric name");
    while (pos_ < s_.size() && NameChar(s_[pos_])) ++pos_;
    out.name = std::string(s_.substr(start, pos_ - start));
    SkipSpaces();
    if (pos_ < s_.size() && s_[pos_] == '{') {
      ++pos_;
      RETURN_IF_ERROR(Labels(out.labels));
    }
    SkipSpaces();
    size_t vstart = pos_;
    while (pos_ < s_.size() && s_[pos_] != ' ' && s_[pos_] != '\t') ++pos_;
    std::string_view vtext = s_.substr(vstart, pos_ - vstart);
    if (vtext.empty()) return Bad(StrCat("expected a value after '", s_.substr(0, vstart), "'"));
    auto v = ParseValue(vtext);
    if (!v) return Bad(StrCat("bad value '", vtext, "'"));
    out.value = *v;
    SkipSpaces();
    // An optional integer timestamp follows; anything else is an error.
    if (pos_ < s_.size()) {
      std::string_view ts = StripWhitespace(s_.substr(pos_));
      int64_t t = 0;
      auto [p, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), t);
      if (ec != std::errc() || p != ts.data() + ts.size()) {
        return Bad(StrCat("unexpected '", ts, "' after the value"));
      }
    }
    std::sort(out.labels.begin(), out.labels.end());
    return out;
  }

 private:
  Status Bad(std::string_view why) const {
    return absl::InvalidArgumentError(StrCat("metrics line ", line_no_, ": ", why));
  }

  void SkipSpaces() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }

  Status Labels(PromLabels& out) {
    for (;;) {
      SkipSpaces();
      if (pos_ >= s_.size()) return Bad("unterminated label set");
      if (s_[pos_] == '}') {
        ++pos_;
        return OkStatus();
      }
      size_t start = pos_;
      if (!NameStart(s_[pos_])) return Bad(StrCat("bad label name at column ", pos_ + 1));
      while (pos_ < s_.size() && NameChar(s_[pos_])) ++pos_;
      std::string name(s_.substr(start, pos_ - start));
      SkipSpaces();
      if (pos_ >= s_.size() || s_[pos_] != '=') return Bad(StrCat("expected '=' after ", name));
      ++pos_;
      SkipSpaces();
      if (pos_ >= s_.size() || s_[pos_] != '"') {
        return Bad(StrCat("expected '\"' to open the value of label ", name));
      }
      ++pos_;
      std::string value;
      for (;;) {
        if (pos_ >= s_.size()) return Bad(StrCat("unterminated value of label ", name));
        char c = s_[pos_++];
        if (c == '"') break;
        if (c == '\\' && pos_ < s_.size()) {
          char e = s_[pos_++];
          value.push_back(e == 'n' ? '\n' : e);
        } else {
          value.push_back(c);
        }
      }
      out.emplace_back(std::move(name), std::move(value));
      SkipSpaces();
      if (pos_ < s_.size() && s_[pos_] == ',') ++pos_;
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  int line_no_;
};

}  // namespace

Result<PromSnapshot> PromSnapshot::Parse(std::string_view text) {
  PromSnapshot snap;
  int line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = StripWhitespace(text.substr(start, end - start));
    start = end + 1;
    ++line_no;
    if (line.empty()) continue;
    if (line[0] == '#') {
      // "# TYPE name type"; HELP and other comments carry nothing a client needs.
      auto parts = StrSplit(line, ' ');
      std::vector<std::string> words;
      for (auto& p : parts) {
        if (!p.empty()) words.push_back(p);
      }
      if (words.size() >= 4 && words[1] == "TYPE") snap.types_[words[2]] = words[3];
      continue;
    }
    LineParser parser(line, line_no);
    ASSIGN_OR_RETURN(PromSample sample, parser.Sample());
    snap.index_[sample.name].push_back(snap.samples_.size());
    snap.samples_.push_back(std::move(sample));
  }
  return snap;
}

std::string PromSnapshot::TypeOf(std::string_view family) const {
  auto it = types_.find(std::string(family));
  return it == types_.end() ? "" : it->second;
}

std::optional<double> PromSnapshot::Sum(std::string_view name, const PromLabels& match) const {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return std::nullopt;
  std::optional<double> total;
  for (size_t i : it->second) {
    if (!Includes(samples_[i].labels, match)) continue;
    total = total.value_or(0) + samples_[i].value;
  }
  return total;
}

std::optional<double> PromSnapshot::Counter(std::string_view family,
                                            const PromLabels& match) const {
  if (auto v = Sum(StrCat(family, "_total"), match)) return v;
  return Sum(family, match);
}

std::map<std::string, double> PromSnapshot::ByLabel(std::string_view family,
                                                    std::string_view label) const {
  std::map<std::string, double> out;
  for (const std::string& name : {StrCat(family, "_total"), std::string(family)}) {
    auto it = index_.find(name);
    if (it == index_.end()) continue;
    for (size_t i : it->second) {
      std::string_view v = LabelValue(samples_[i].labels, label);
      if (v.empty()) continue;
      out[std::string(v)] += samples_[i].value;
    }
    if (!out.empty()) break;
  }
  return out;
}

std::optional<PromHistogram> PromSnapshot::Histogram(std::string_view family,
                                                     const PromLabels& match) const {
  auto it = index_.find(StrCat(family, "_bucket"));
  if (it == index_.end()) return std::nullopt;
  std::map<double, double> by_le;
  for (size_t i : it->second) {
    const PromSample& s = samples_[i];
    if (!Includes(s.labels, match)) continue;
    auto le = ParseValue(LabelValue(s.labels, "le"));
    if (!le) continue;
    by_le[*le] += s.value;
  }
  if (by_le.empty()) return std::nullopt;
  PromHistogram h;
  h.buckets.assign(by_le.begin(), by_le.end());
  h.sum = Sum(StrCat(family, "_sum"), match).value_or(0);
  h.count = Sum(StrCat(family, "_count"), match).value_or(h.buckets.back().second);
  return h;
}

double CounterDelta(double before, double after) {
  return after >= before ? after - before : after;
}

PromHistogram HistogramDelta(const PromHistogram& before, const PromHistogram& after) {
  bool reset = after.count < before.count;
  PromHistogram d;
  d.sum = reset ? after.sum : after.sum - before.sum;
  d.count = reset ? after.count : after.count - before.count;
  for (const auto& [le, n] : after.buckets) {
    double prev = 0;
    if (!reset) {
      for (const auto& [ble, bn] : before.buckets) {
        if (ble == le) prev = bn;
      }
    }
    d.buckets.emplace_back(le, n - prev);
  }
  return d;
}

std::optional<double> HistogramQuantile(const PromHistogram& h, double q) {
  if (h.buckets.empty()) return std::nullopt;
  double total = h.buckets.back().second;
  if (total <= 0) return std::nullopt;
  double rank = q * total;
  double prev_le = 0, prev_count = 0;
  for (const auto& [le, count] : h.buckets) {
    if (count >= rank) {
      if (std::isinf(le)) return prev_le;  // past the last finite bound: its lower edge
      double in_bucket = count - prev_count;
      if (in_bucket <= 0) return le;
      return prev_le + (le - prev_le) * (rank - prev_count) / in_bucket;
    }
    prev_le = le;
    prev_count = count;
  }
  return h.buckets.back().first;
}

}  // namespace longhaul::stages
