// Internal to longhaul_workflow: reading YAML nodes (yaml_tree.h) with every problem collected.
//
// Each reader reports what is wrong through Diagnostics (never throws) and returns nullopt,
// so one pass over a file finds all of its errors. `what` in every reader names the value in
// messages, e.g. "timeout in stage 'datagen'", giving
// "wf.yaml:7:14: timeout in stage 'datagen': expected a duration like 30s, got 'soon'".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "daemon/workflow/workflow.h"
#include "daemon/workflow/yaml_tree.h"

namespace longhaul::workflow {

// Problems found in one file, each reported as "PATH:LINE:COL: message".
class Diagnostics {
 public:
  explicit Diagnostics(std::string path) : path_(std::move(path)) {}
  void Add(SourcePos pos, std::string message);
  bool empty() const { return entries_.empty(); }
  // InvalidArgument holding every problem, one per line, ordered by position (problems at
  // the same position keep the order they were found in); OK when there are none.
  Status ToStatus() const;

 private:
  struct Entry {
    SourcePos pos;
    std::string message;
  };
  std::string path_;
  std::vector<Entry> entries_;
};

// The node's 1-based position; {0, 0} when it has none (an empty document).
SourcePos PosOf(const YamlNode& node);

// Optimal-string-alignment edit distance (a transposition counts as one edit).
int EditDistance(std::string_view a, std::string_view b);
// " (did you mean 'needs'?)" for the closest candidate within a small distance, else "".
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

// A scalar value with where it was written. `quoted` tells a column finder that the text
// starts one column after the mark.
struct Scalar {
  std::string text;
  SourcePos pos;
  bool quoted = false;
};

struct MapEntry {
  std::string key;
  SourcePos key_pos;
  YamlNode value;
  // Where to point at the value: its own mark, or the key's when the value is empty.
  SourcePos value_pos;
};

// The entries of a mapping in file order. Reports non-scalar keys, duplicate keys ("duplicate
// NOUN 'x' in WHERE (first at line 3)"; the later one is dropped) and, when `allowed` is
// given, unknown keys with a suggestion. `where` is "stage 'datagen'", "defaults", ...
std::vector<MapEntry> ReadMap(const YamlNode& map, std::string_view where, std::string_view noun,
                              const std::vector<std::string>* allowed, Diagnostics& diag);

// The entry `key` of mapping `map` with where it is (value_pos: the value's mark, or the key's
// when the value is empty); nullopt when `map` is not a mapping or has no such key. Reports
// nothing.
std::optional<MapEntry> FindMapEntry(const YamlNode& map, std::string_view key);

// "a list", "a mapping", "nothing", or "'text'" for a scalar: what a value was, in messages.
std::string Describe(const YamlNode& node);

// "run[2] in stage 'a'" from "run in stage 'a'" and 2: names a list element in messages.
std::string ElementName(std::string_view what, size_t index);

// Type checks: report "WHAT: expected a mapping, got a list" and return false.
bool ExpectMap(const MapEntry& e, std::string_view what, Diagnostics& diag);
bool ExpectList(const MapEntry& e, std::string_view what, Diagnostics& diag);

// Scalar readers. Null, lists and mappings are reported as the wrong type.
std::optional<Scalar> ReadScalar(const YamlNode& node, SourcePos pos, std::string_view what,
                                 Diagnostics& diag);
std::optional<Scalar> ReadScalar(const MapEntry& e, std::string_view what, Diagnostics& diag);
std::optional<bool> ReadBool(const MapEntry& e, std::string_view what, Diagnostics& diag);
std::optional<int64_t> ReadInt(const YamlNode& node, SourcePos pos, std::string_view what,
                               int64_t min, int64_t max, Diagnostics& diag);
std::optional<int64_t> ReadInt(const MapEntry& e, std::string_view what, int64_t min, int64_t max,
                               Diagnostics& diag);
// A finite number > 0.
std::optional<double> ReadPositiveNumber(const MapEntry& e, std::string_view what,
                                         Diagnostics& diag);
// A duration (core/duration.h) in ms; `allow_zero` false rejects "0s".
std::optional<int64_t> ReadDuration(const MapEntry& e, std::string_view what, bool allow_zero,
                                    Diagnostics& diag);
std::optional<int64_t> ReadByteSize(const MapEntry& e, std::string_view what, Diagnostics& diag);
// A list of scalars ("expected a list" for anything else; each bad element reported).
std::optional<std::vector<Scalar>> ReadScalarList(const MapEntry& e, std::string_view what,
                                                  Diagnostics& diag);

// "16G", "512Mi", "1.5GiB", "2048" (bytes). Units K, M, G, T, P are powers of 1024; an "i"
// and a trailing "B" are optional. InvalidArgument says what was wrong.
Result<int64_t> ParseByteSize(std::string_view text);

}  // namespace longhaul::workflow
