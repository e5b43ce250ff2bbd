// Prometheus' text exposition format (0.0.4) read as strictly as it is defined, for the tests
// of longhauld's and longhaul-agent's /metrics; and the series the Grafana dashboard asks for.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace longhaul::testing {

struct Exposition {
  std::map<std::string, std::string> types;  // family -> counter, gauge, histogram
  std::map<std::string, double> samples;     // "name{a=\"b\",...}" as written -> value
};

// Fails the current test (gtest EXPECT/ASSERT) on any line that is not a HELP, a TYPE or a
// well-formed sample of the family the last TYPE announced: HELP and TYPE once per family,
// HELP first, counters named *_total, valid names, label values with only \\ \" \n escapes,
// no duplicate series, numeric values.
void ParseExposition(const std::string& text, Exposition& e);

// The value of `series` ("name" or "name{a=\"b\"}" as written); NaN, and a test failure, when
// there is none.
double SeriesValue(const Exposition& e, const std::string& series);

// The family a sample belongs to: its name, or the histogram its suffix names.
std::string FamilyOf(const std::string& name, const std::map<std::string, std::string>& types);

// Every longhaul_* metric name in the expressions of deploy/grafana/longhaul.json, with the
// title of the panel that asks for it. Fails the test when the file is not JSON.
std::vector<std::pair<std::string, std::string>> DashboardMetrics();

}  // namespace longhaul::testing
