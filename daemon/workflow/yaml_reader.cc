#include "daemon/workflow/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "core/duration.h"
#include "core/memory_policy.h"
#include "core/strings.h"

namespace longhaul::workflow {

void Diagnostics::Add(SourcePos pos, std::string message) {
  entries_.push_back(Entry{pos, std::move(message)});
}

Status Diagnostics::ToStatus() const {
  if (entries_.empty()) return OkStatus();
  std::vector<const Entry*> sorted;
  for (const Entry& e : entries_) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) {
    return std::pair(a->pos.line, a->pos.column) < std::pair(b->pos.line, b->pos.column);
  });
  std::string text;
  for (const Entry* e : sorted) {
    if (!text.empty()) text += '\n';
    text += StrCat(path_, ":", std::max(e->pos.line, 1), ":", std::max(e->pos.column, 1), ": ",
                   e->message);
  }
  return absl::InvalidArgumentError(text);
}

SourcePos PosOf(const YamlNode& node) {
  if (node.line() < 0) return {};
  return SourcePos{node.line() + 1, node.column() + 1};
}

int EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  // Two edits catch the usual typos ("neds", "retyr", "stall_timout") without proposing
  // unrelated words for short keys.
  int limit = std::min<int>(2, static_cast<int>(word.size()) / 2);
  const std::string* best = nullptr;
  int best_distance = limit + 1;
  for (const std::string& c : candidates) {
    int d = EditDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = &c;
    }
  }
  return best ? StrCat(" (did you mean '", *best, "'?)") : "";
}

namespace {

// What yaml-cpp's convert<bool> accepts: y/n, yes/no, true/false, on/off, each in lower case,
// upper case or capitalised.
std::optional<bool> ParseYamlBool(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool upper = std::all_of(text.begin(), text.end(), [](char c) { return !std::islower(c); });
  bool capital = std::all_of(text.begin() + 1, text.end(),
                             [](char c) { return !std::isupper(c); });
  if (!upper && !capital) return std::nullopt;
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view t : {"y", "yes", "true", "on"}) {
    if (lower == t) return true;
  }
  for (std::string_view f : {"n", "no", "false", "off"}) {
    if (lower == f) return false;
  }
  return std::nullopt;
}

}  // namespace

std::string ElementName(std::string_view what, size_t index) {
  size_t in = what.find(" in ");
  if (in == std::string_view::npos) in = what.size();
  return StrCat(what.substr(0, in), "[", index, "]", what.substr(in));
}

std::string Describe(const YamlNode& node) {
  switch (node.Type()) {
    case YamlType::kSequence:
      return "a list";
    case YamlType::kMap:
      return "a mapping";
    case YamlType::kScalar:
      return StrCat("'", node.Scalar(), "'");
    default:
      return "nothing";
  }
}

std::vector<MapEntry> ReadMap(const YamlNode& map, std::string_view where, std::string_view noun,
                              const std::vector<std::string>* allowed, Diagnostics& diag) {
  std::vector<MapEntry> entries;
  entries.reserve(map.size());
  NoteBigBuffer(entries.data(), entries.capacity() * sizeof(MapEntry));
  // Duplicate keys: a stage's few keys by a scan back (no allocation: ReadMap runs once a
  // stage), a big map's through a hash of views into the tree, which outlives this call.
  constexpr size_t kHashFrom = 16;
  bool hashed = map.size() >= kHashFrom;
  std::unordered_map<std::string_view, int> first_line;
  if (hashed) first_line.reserve(map.size());
  auto earlier_line = [&](size_t i, std::string_view name, int line) -> std::optional<int> {
    if (hashed) {
      auto [seen, inserted] = first_line.emplace(name, line);
      return inserted ? std::nullopt : std::optional<int>(seen->second);
    }
    for (size_t j = 0; j < i; ++j) {
      YamlNode k = map.key(j);
      if (k.IsScalar() && k.Scalar() == name) return PosOf(k).line;
    }
    return std::nullopt;
  };
  for (size_t i = 0; i < map.size(); ++i) {
    YamlNode key = map.key(i);
    YamlNode value = map.value(i);
    SourcePos key_pos = PosOf(key);
    if (!key.IsScalar()) {
      diag.Add(key_pos, StrCat("expected a plain name as key in ", where, ", got ", Describe(key)));
      continue;
    }
    std::string_view name = key.Scalar();
    if (std::optional<int> first = earlier_line(i, name, key_pos.line)) {
      diag.Add(key_pos, StrCat("duplicate ", noun, " '", name, "' in ", where, " (first at line ",
                               *first, ")"));
      continue;
    }
    if (allowed && std::find(allowed->begin(), allowed->end(), name) == allowed->end()) {
      diag.Add(key_pos, StrCat("unknown key '", name, "' in ", where, DidYouMean(name, *allowed)));
      continue;
    }
    MapEntry e{std::string(name), key_pos, value, key_pos};
    // yaml-cpp marks an empty value at the start of the next token: point at the key.
    if (!value.IsNull()) {
      SourcePos value_pos = PosOf(value);
      if (value_pos.line > 0) e.value_pos = value_pos;
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

bool ExpectMap(const MapEntry& e, std::string_view what, Diagnostics& diag) {
  if (e.value.IsMap()) return true;
  diag.Add(e.value_pos, StrCat(what, ": expected a mapping, got ", Describe(e.value)));
  return false;
}

bool ExpectList(const MapEntry& e, std::string_view what, Diagnostics& diag) {
  if (e.value.IsSequence()) return true;
  diag.Add(e.value_pos, StrCat(what, ": expected a list, got ", Describe(e.value)));
  return false;
}

std::optional<Scalar> ReadScalar(const YamlNode& node, SourcePos pos, std::string_view what,
                                 Diagnostics& diag) {
  if (!node.IsScalar()) {
    diag.Add(pos, StrCat(what, ": expected a string, got ", Describe(node)));
    return std::nullopt;
  }
  return Scalar{std::string(node.Scalar()), pos, node.quoted()};
}

std::optional<Scalar> ReadScalar(const MapEntry& e, std::string_view what, Diagnostics& diag) {
  return ReadScalar(e.value, e.value_pos, what, diag);
}

std::optional<bool> ReadBool(const MapEntry& e, std::string_view what, Diagnostics& diag) {
  if (e.value.IsScalar()) {
    if (std::optional<bool> value = ParseYamlBool(e.value.Scalar())) return value;
  }
  diag.Add(e.value_pos, StrCat(what, ": expected true or false, got ", Describe(e.value)));
  return std::nullopt;
}

std::optional<int64_t> ReadInt(const YamlNode& node, SourcePos pos, std::string_view what,
                               int64_t min, int64_t max, Diagnostics& diag) {
  if (node.IsScalar()) {
    std::string_view s = node.Scalar();
    int64_t value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec == std::errc() && end == s.data() + s.size() && value >= min && value <= max) {
      return value;
    }
  }
  std::string range =
      max == INT32_MAX || max == INT64_MAX ? StrCat(">= ", min) : StrCat("from ", min, " to ", max);
  diag.Add(pos, StrCat(what, ": expected an integer ", range, ", got ", Describe(node)));
  return std::nullopt;
}

std::optional<int64_t> ReadInt(const MapEntry& e, std::string_view what, int64_t min, int64_t max,
                               Diagnostics& diag) {
  return ReadInt(e.value, e.value_pos, what, min, max, diag);
}

std::optional<double> ReadPositiveNumber(const MapEntry& e, std::string_view what,
                                         Diagnostics& diag) {
  if (e.value.IsScalar()) {
    std::string s(e.value.Scalar());
    char* end = nullptr;
    double value = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(value) && value > 0) {
      return value;
    }
  }
  diag.Add(e.value_pos, StrCat(what, ": expected a number > 0, got ", Describe(e.value)));
  return std::nullopt;
}

std::optional<int64_t> ReadDuration(const MapEntry& e, std::string_view what, bool allow_zero,
                                    Diagnostics& diag) {
  if (e.value.IsScalar()) {
    Result<int64_t> ms = ParseDurationMs(e.value.Scalar());
    if (ms.ok() && (allow_zero || *ms > 0)) return *ms;
    if (ms.ok()) {
      diag.Add(e.value_pos, StrCat(what, ": must be longer than 0"));
      return std::nullopt;
    }
  }
  diag.Add(e.value_pos, StrCat(what, ": expected a duration like 30s, got ", Describe(e.value)));
  return std::nullopt;
}

Result<int64_t> ParseByteSize(std::string_view text) {
  std::string s(StripWhitespace(text));
  char* end = nullptr;
  double value = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str() || !std::isfinite(value) || value < 0 || s[0] == '-' ||
      s[0] == '+') {
    return absl::InvalidArgumentError(StrCat("'", text, "' does not start with a size"));
  }
  std::string unit(end);
  unit = std::string(StripWhitespace(unit));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (EndsWith(unit, "B")) unit.pop_back();
  if (EndsWith(unit, "I")) unit.pop_back();
  static const std::string kUnits = "KMGTP";
  double scale = 1;
  if (!unit.empty()) {
    size_t power = unit.size() == 1 ? kUnits.find(unit[0]) : std::string::npos;
    if (power == std::string::npos) {
      return absl::InvalidArgumentError(
          StrCat("'", text, "' has an unknown unit (expected K, M, G, T or P)"));
    }
    scale = std::pow(1024.0, static_cast<double>(power + 1));
  }
  double bytes = value * scale;
  if (bytes > 9.0e18) return absl::InvalidArgumentError(StrCat("'", text, "' is too large"));
  return static_cast<int64_t>(bytes);
}

std::optional<int64_t> ReadByteSize(const MapEntry& e, std::string_view what, Diagnostics& diag) {
  if (e.value.IsScalar()) {
    Result<int64_t> bytes = ParseByteSize(e.value.Scalar());
    if (bytes.ok()) return *bytes;
  }
  diag.Add(e.value_pos, StrCat(what, ": expected a size like 16G or a number of bytes, got ",
                               Describe(e.value)));
  return std::nullopt;
}

std::optional<std::vector<Scalar>> ReadScalarList(const MapEntry& e, std::string_view what,
                                                  Diagnostics& diag) {
  if (!ExpectList(e, what, diag)) return std::nullopt;
  std::vector<Scalar> out;
  bool ok = true;
  for (size_t i = 0; i < e.value.size(); ++i) {
    YamlNode item = e.value[i];
    SourcePos pos = item.IsNull() ? e.value_pos : PosOf(item);
    std::optional<Scalar> s = ReadScalar(item, pos, ElementName(what, i), diag);
    if (!s) {
      ok = false;
      continue;
    }
    out.push_back(std::move(*s));
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<MapEntry> FindMapEntry(const YamlNode& map, std::string_view key) {
  if (!map.IsMap()) return std::nullopt;
  for (size_t i = 0; i < map.size(); ++i) {
    if (map.key(i).Scalar() != key) continue;
    MapEntry e{std::string(key), PosOf(map.key(i)), map.value(i), PosOf(map.key(i))};
    if (!e.value.IsNull() && e.value.line() >= 0) e.value_pos = PosOf(e.value);
    return e;
  }
  return std::nullopt;
}

}  // namespace longhaul::workflow
