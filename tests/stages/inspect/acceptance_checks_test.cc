// The acceptance rules of lh-inspect predictions, on the figures lh-refengine reports for a
// correct and a misaligned drafter (docs/refengine.md, "Figures").
#include "stages/inspect/acceptance_checks.h"

#include <gtest/gtest.h>

namespace longhaul::inspect {
namespace {

AcceptanceFigures Figures(std::vector<double> per_pos, double drafts = 1000) {
  AcceptanceFigures f;
  f.per_position = per_pos;
  f.drafts = drafts;
  f.counters = true;
  double sum = 0;
  for (double v : per_pos) sum += v;
  f.rate = sum / per_pos.size();
  f.length = 1 + sum;
  return f;
}

std::vector<std::string> Checks(const Report& r) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings()) out.push_back(f.check);
  return out;
}

TEST(AcceptanceChecksTest, HealthyDrafterRaisesNothing) {
  Report r;
  AcceptanceRules rules;
  rules.expected = {0.8};
  CheckAcceptance(Figures({0.758, 0.527, 0.325}), rules, r);
  EXPECT_TRUE(r.findings().empty()) << r.ToJson().dump(2);
}

TEST(AcceptanceChecksTest, MisalignedDrafterIsFarBelowAndWeakAtPositionZero) {
  Report r;
  AcceptanceRules rules;
  rules.expected = {0.758};
  CheckAcceptance(Figures({0.170, 0.037, 0.033}), rules, r);
  auto checks = Checks(r);
  EXPECT_NE(std::find(checks.begin(), checks.end(), "acceptance_far_below_expected"), checks.end());
  EXPECT_NE(std::find(checks.begin(), checks.end(), "weak_position_0"), checks.end());
  for (const Finding& f : r.findings()) {
    EXPECT_EQ(f.severity, Severity::kWarn);
    if (f.check == "acceptance_far_below_expected") {
      EXPECT_NE(f.text.find("position 0 is 0.170"), std::string::npos) << f.text;
      EXPECT_NE(f.text.find("0.758"), std::string::npos) << f.text;
    }
  }
}

TEST(AcceptanceChecksTest, ConditionalRatesNeedSupport) {
  AcceptanceFigures f = Figures({0.5, 0.25, 0.2}, 100);
  auto c = ConditionalAcceptance(f, 20);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_DOUBLE_EQ(*c[0], 0.5);
  EXPECT_DOUBLE_EQ(*c[1], 0.5);
  EXPECT_DOUBLE_EQ(*c[2], 0.8);
  // Only 10 rounds reach position 2 here: too few to judge it.
  auto thin = ConditionalAcceptance(Figures({0.2, 0.1, 0.05}, 50), 20);
  EXPECT_TRUE(thin[0].has_value());
  EXPECT_FALSE(thin[1].has_value());
  EXPECT_FALSE(thin[2].has_value());
}

TEST(AcceptanceChecksTest, PerPositionExpectationsAndOverallFallback) {
  Report r;
  AcceptanceRules rules;
  rules.expected = {0.8, 0.6, 0.5};
  CheckAcceptance(Figures({0.75, 0.55, 0.2}), rules, r);
  ASSERT_EQ(r.findings().size(), 1u) << r.ToJson().dump(2);
  EXPECT_NE(r.findings()[0].text.find("position 2"), std::string::npos);

  // SGLang-style gauges: no per-position figures, the overall rate is compared.
  Report g;
  AcceptanceFigures gauges;
  gauges.rate = 0.1;
  gauges.length = 1.3;
  rules.expected = {0.6};
  CheckAcceptance(gauges, rules, g);
  ASSERT_EQ(g.findings().size(), 1u);
  EXPECT_NE(g.findings()[0].text.find("acceptance rate is 0.100"), std::string::npos);
}

TEST(AcceptanceChecksTest, NoDraftsAndInconsistentCounters) {
  Report none;
  CheckAcceptance(Figures({}, 0), {}, none);
  ASSERT_EQ(none.findings().size(), 1u);
  EXPECT_EQ(none.findings()[0].check, "no_drafts");
  EXPECT_EQ(none.findings()[0].severity, Severity::kError);

  Report odd;
  CheckAcceptance(Figures({0.3, 0.4, 0.1}), {}, odd);
  auto checks = Checks(odd);
  EXPECT_NE(std::find(checks.begin(), checks.end(), "inconsistent_counters"), checks.end());
}

TEST(ReportTest, FailOnThresholdsAndJson) {
  Report r;
  r.Add(Severity::kInfo, "data", "note", "just so you know");
  EXPECT_FALSE(r.Fails(Severity::kWarn));
  r.Add(Severity::kWarn, "data", "leak", "a leak");
  EXPECT_TRUE(r.Fails(Severity::kWarn));
  EXPECT_FALSE(r.Fails(Severity::kError));
  r.Metric("samples", 3);
  r.Metric("samples", 4);
  auto j = r.ToJson();
  EXPECT_EQ(j["metrics"]["samples"], 4);
  EXPECT_EQ(j["summary"]["warnings"], 1);
  EXPECT_EQ(j["findings"][1]["severity"], "warn");
  EXPECT_FALSE(ParseFailOn("info").ok());
  EXPECT_EQ(*ParseFailOn("error"), Severity::kError);
}

}  // namespace
}  // namespace longhaul::inspect
