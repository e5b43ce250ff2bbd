// Test helpers for a stage's event file ($LONGHAUL_EVENTS, core/event.h), read back by the
// stage binaries' tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/strings.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {

// The events in the file, in order ("" or missing file: none). A line that does not parse is
// skipped: a stage still running may have written half of its last line. With `strict`, a
// non-empty line that does not parse also fails the test (for files of stages that ended).
inline std::vector<StageEvent> ReadEvents(const std::string& path, bool strict = false) {
  std::vector<StageEvent> out;
  for (const std::string& line : StrSplit(ReadTextFile(path), '\n')) {
    auto ev = ParseEventLine(line);
    if (strict && !line.empty()) {
      EXPECT_TRUE(ev.ok()) << path << ": " << line;
    }
    if (ev.ok()) out.push_back(*ev);
  }
  return out;
}

// The last value of each metric.
inline std::map<std::string, double> ReadMetrics(const std::string& path) {
  std::map<std::string, double> m;
  for (const StageEvent& e : ReadEvents(path)) {
    if (e.type == EventType::kMetric) m[e.name] = e.value;
  }
  return m;
}

// Whether the file holds a `ready` event.
inline bool HasReadyEvent(const std::string& path) {
  for (const StageEvent& e : ReadEvents(path)) {
    if (e.type == EventType::kReady) return true;
  }
  return false;
}

// The value of the first `output` event named `name`; "" if there is none.
inline std::string OutputValue(const std::string& path, const std::string& name) {
  for (const StageEvent& e : ReadEvents(path)) {
    if (e.type == EventType::kOutput && e.name == name) return e.text;
  }
  return "";
}

}  // namespace longhaul::testing
