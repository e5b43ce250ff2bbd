// GET /metrics on a real cluster: the exposition is parsed as strictly as the text format
// (version 0.0.4) is defined, and its values are checked after a run whose numbers are known:
// one stage that reports progress, one that fails twice (a retry), so three attempts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <fstream>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

struct Exposition {
  std::map<std::string, std::string> types;   // family -> counter, gauge, histogram
  std::map<std::string, double> samples;      // "name{a=\"b\",...}" as written -> value
};

bool ValidName(const std::string& n) {
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':') return false;
  }
  return true;
}

// The family a sample belongs to: its name, or the histogram its suffix names.
std::string FamilyOf(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      std::string base = name.substr(0, name.size() - s.size());
      auto it = types.find(base);
      if (it != types.end() && it->second == "histogram") return base;
    }
  }
  return name;
}

// Fails the test on any line that is not a HELP, a TYPE or a well-formed sample of the
// family the last TYPE announced.
void Parse(const std::string& text, Exposition& e) {
  std::string current;
  std::set<std::string> helped;
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  for (const std::string& line : SplitLines(text)) {
    if (line.rfind("# HELP ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(ValidName(name)) << line;
      EXPECT_TRUE(helped.insert(name).second) << "second HELP: " << line;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      size_t sp = line.find(' ', 7);
      ASSERT_NE(sp, std::string::npos) << line;
      std::string name = line.substr(7, sp - 7), type = line.substr(sp + 1);
      EXPECT_TRUE(type == "counter" || type == "gauge" || type == "histogram") << line;
      EXPECT_TRUE(e.types.emplace(name, type).second) << "second TYPE: " << line;
      EXPECT_TRUE(helped.count(name)) << "TYPE before HELP: " << line;
      if (type == "counter") {
        EXPECT_EQ(name.substr(name.size() - 6), "_total") << line;
      }
      current = name;
      continue;
    }
    EXPECT_NE(line[0], '#') << line;
    size_t brace = line.find('{');
    size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    std::string name = line.substr(0, std::min(brace, space));
    EXPECT_TRUE(ValidName(name)) << line;
    EXPECT_EQ(FamilyOf(name, e.types), current) << "sample outside its family: " << line;
    if (brace != std::string::npos && brace < space) {
      size_t close = line.find("} ", brace);
      ASSERT_NE(close, std::string::npos) << line;
      std::string labels = line.substr(brace + 1, close - brace - 1);
      // name="value" pairs, comma separated, values with only \\ \" \n escapes.
      size_t i = 0;
      while (i < labels.size()) {
        size_t eq = labels.find("=\"", i);
        ASSERT_NE(eq, std::string::npos) << line;
        EXPECT_TRUE(ValidName(labels.substr(i, eq - i))) << line;
        size_t j = eq + 2;
        while (j < labels.size() && labels[j] != '"') {
          if (labels[j] == '\\') {
            ASSERT_LT(j + 1, labels.size()) << line;
            EXPECT_TRUE(labels[j + 1] == '\\' || labels[j + 1] == '"' || labels[j + 1] == 'n')
                << line;
            ++j;
          }
          ++j;
        }
        ASSERT_LT(j, labels.size()) << "unterminated label value: " << line;
        i = j + 1;
        if (i < labels.size()) {
          EXPECT_EQ(labels[i], ',') << line;
          ++i;
        }
      }
    }
    std::string value = line.substr(space + 1);
    char* end = nullptr;
    double v = value == "+Inf" ? INFINITY : value == "-Inf" ? -INFINITY : std::strtod(value.c_str(), &end);
    if (value != "+Inf" && value != "-Inf") EXPECT_TRUE(end && *end == '\0') << line;
    EXPECT_TRUE(e.samples.emplace(line.substr(0, space), v).second) << "duplicate: " << line;
  }
}

double Value(const Exposition& e, const std::string& series) {
  auto it = e.samples.find(series);
  EXPECT_NE(it, e.samples.end()) << "no sample " << series;
  return it == e.samples.end() ? NAN : it->second;
}

TEST_F(ClusterTest, MetricsAreWellFormedAndCountARunWithARetry) {
  ClusterOptions o;
  o.gpus = 2;
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  Result<int64_t> id = cluster().Submit(
      "name: m\n"
      "stages:\n"
      "  work:\n"
      "    run: [lh-testjob, --events, '40']\n"
      "  flaky:\n"
      "    run: [lh-testjob, --exit, '3']\n"
      "    retry: {limit: 1, backoff: 1ms}\n");
  ASSERT_TRUE(id.ok()) << id.status();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->status(), v1::RUN_FAILED) << DescribeRun(*run);

  // Ready: the scheduler loop ran a batch and the store committed it.
  Result<HttpResult> ready = HttpRequest(cluster().http_address(), "GET", "/readyz");
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 200) << ready->body;
  EXPECT_EQ(ready->body, "ok");

  Result<HttpResult> r = HttpRequest(cluster().http_address(), "GET", "/metrics");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->Header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  Exposition e;
  Parse(r->body, e);
  ASSERT_FALSE(HasFailure()) << r->body;

  EXPECT_EQ(Value(e, "longhaul_runs{status=\"failed\"}"), 1);
  EXPECT_EQ(Value(e, "longhaul_runs{status=\"succeeded\"}"), 0);
  EXPECT_EQ(Value(e, "longhaul_attempts_started_total"), 3);
  EXPECT_EQ(Value(e, "longhaul_attempt_failures_total{reason=\"exit\"}"), 2);
  Result<std::string> events = cluster().Query("SELECT count(*) FROM events");
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(Value(e, "longhaul_events_ingested_total"), std::stod(*events));
  EXPECT_GE(std::stod(*events), 40);
  EXPECT_EQ(Value(e, "longhaul_agents{state=\"connected\"}"), 1);
  EXPECT_EQ(Value(e, "longhaul_gpus{state=\"free\"}"), 2);
  EXPECT_EQ(Value(e, "longhaul_gpus{state=\"busy\"}"), 0);
  // Every attempt had a handoff; the buckets only grow and end at the count.
  for (const char* h : {"longhaul_handoff_seconds", "longhaul_sqlite_commit_seconds"}) {
    EXPECT_EQ(e.types[h], "histogram");
    double count = Value(e, StrCat(h, "_count"));
    EXPECT_EQ(Value(e, StrCat(h, "_bucket{le=\"+Inf\"}")), count);
    std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
    std::string prefix = StrCat(h, "_bucket{le=\"");
    for (const auto& [series, v] : e.samples) {
      if (series.rfind(prefix, 0) != 0) continue;
      std::string le = series.substr(prefix.size(), series.size() - prefix.size() - 2);
      buckets.emplace_back(le == "+Inf" ? INFINITY : std::stod(le), v);
    }
    std::sort(buckets.begin(), buckets.end());
    ASSERT_GE(buckets.size(), 2u) << h;
    for (size_t i = 1; i < buckets.size(); ++i) {
      EXPECT_LE(buckets[i - 1].second, buckets[i].second) << h << " le=" << buckets[i].first;
    }
    EXPECT_EQ(buckets.back().second, count) << h;
  }
  EXPECT_EQ(Value(e, "longhaul_handoff_seconds_count"), 3);
  EXPECT_GT(Value(e, "longhaul_sqlite_commit_seconds_count"), 0);

  // The Grafana dashboard asks only for series longhauld serves.
  std::ifstream in(SourceDir() + "/deploy/grafana/longhaul.json");
  nlohmann::json dash = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(dash.is_object()) << "deploy/grafana/longhaul.json is not JSON";
  std::regex name("longhaul_[a-z_]+");
  int asked = 0;
  for (const auto& panel : dash["panels"]) {
    for (const auto& target : panel["targets"]) {
      std::string expr = target["expr"].get<std::string>();
      for (std::sregex_iterator it(expr.begin(), expr.end(), name), end; it != end; ++it) {
        ++asked;
        EXPECT_TRUE(e.types.count(FamilyOf(it->str(), e.types)))
            << panel["title"] << ": " << it->str() << " is not served";
      }
    }
  }
  EXPECT_GE(asked, 10);
}

}  // namespace
}  // namespace longhaul::testing
