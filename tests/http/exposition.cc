#include "tests/http/exposition.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/strings.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {
namespace {

bool ValidName(const std::string& n) {
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':') return false;
  }
  return true;
}

}  // namespace

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

void ParseExposition(const std::string& text, Exposition& e) {
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
    double v = value == "+Inf"   ? INFINITY
               : value == "-Inf" ? -INFINITY
                                 : std::strtod(value.c_str(), &end);
    if (value != "+Inf" && value != "-Inf") {
      EXPECT_TRUE(end && *end == '\0') << line;
    }
    EXPECT_TRUE(e.samples.emplace(line.substr(0, space), v).second) << "duplicate: " << line;
  }
}

double SeriesValue(const Exposition& e, const std::string& series) {
  auto it = e.samples.find(series);
  EXPECT_NE(it, e.samples.end()) << "no sample " << series;
  return it == e.samples.end() ? NAN : it->second;
}

std::vector<std::pair<std::string, std::string>> DashboardMetrics() {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream in(SourceDir() + "/deploy/grafana/longhaul.json");
  nlohmann::json dash = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(dash.is_object()) << "deploy/grafana/longhaul.json is not JSON";
  if (!dash.is_object()) return out;
  std::regex name("longhaul_[a-z_]+");
  for (const auto& panel : dash["panels"]) {
    for (const auto& target : panel.value("targets", nlohmann::json::array())) {
      std::string expr = target.value("expr", "");
      for (std::sregex_iterator it(expr.begin(), expr.end(), name), end; it != end; ++it) {
        out.emplace_back(panel.value("title", ""), it->str());
      }
    }
  }
  return out;
}

}  // namespace longhaul::testing
