#include "daemon/scheduler/early_stop.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace longhaul::scheduler {
namespace {

// The number as a stage's reason shows it: 0.7, 1.25, 1e-05.
std::string EarlyStopNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// Of the items in `curves` other than `item` that reached `step`, each one's value there.
template <typename Curves>
std::vector<std::pair<std::string, double>> ValuesAtStep(const Curves& curves,
                                                         const std::string& item, int64_t step) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, curve] : curves) {
    if (name == item || curve.by_step.empty() || curve.by_step.rbegin()->first < step) continue;
    auto it = curve.by_step.upper_bound(step);  // reached: some step >= `step` exists
    if (it == curve.by_step.begin()) continue;  // reported only later steps: no value at `step`
    out.emplace_back(name, std::prev(it)->second);
  }
  return out;
}

}  // namespace

std::optional<EarlyStopVerdict> SweepJudge::Observe(const std::string& item, int64_t step,
                                                    double value) {
  if (!std::isfinite(value)) return std::nullopt;
  Curve& curve = curves_[item];
  curve.by_step[step] = value;
  if (stopped_.count(item)) return std::nullopt;
  std::optional<EarlyStopVerdict> verdict;
  if (spec_.rule == workflow::EarlyStopSpec::Rule::kAsha) {
    verdict = JudgeAsha(item, curve, step, value);
  } else if (spec_.rungs.empty()) {
    verdict = JudgeMedian(item, step);
  } else {
    // Each rung this report reached, in order; a rung is judged once.
    while (!verdict && curve.next_rung < spec_.rungs.size() &&
           step >= spec_.rungs[curve.next_rung]) {
      verdict = JudgeMedian(item, spec_.rungs[curve.next_rung++]);
    }
  }
  if (verdict) stopped_.insert(item);
  return verdict;
}

std::optional<EarlyStopVerdict> SweepJudge::JudgeAsha(const std::string& item, Curve& curve,
                                                      int64_t step, double value) {
  while (curve.next_rung < spec_.rungs.size() && step >= spec_.rungs[curve.next_rung]) {
    size_t index = curve.next_rung++;
    int64_t rung_step = spec_.rungs[index];
    Rung& rung = rungs_[rung_step];
    rung.values.emplace_back(item, value);
    size_t n = rung.values.size();
    size_t keep = (n + spec_.eta - 1) / spec_.eta;  // ceil(n / eta), at least 1
    std::vector<std::pair<std::string, double>> better;
    for (const auto& [other, v] : rung.values) {
      if (Better(v, value)) better.emplace_back(other, v);
    }
    if (better.size() + 1 <= keep) {  // promoted to the next rung
      curve.kept =
          StrCat(spec_.metric, " ", EarlyStopNumber(value), " at rung ", index + 1, " (step ",
                 rung_step, ") is among the best ", keep, " of ", n, " (eta ", spec_.eta, ")");
      continue;
    }
    return EarlyStopVerdict{
        item, rung_step, value,
        StrCat("rung ", index + 1, " (step ", rung_step, "): ", spec_.metric, " ",
               EarlyStopNumber(value), " is not among the best ", keep, " of ", n,
               n == 1 ? " item" : " items", " there (eta ", spec_.eta, "); beaten by ",
               Beaten(std::move(better), spec_.maximize))};
  }
  return std::nullopt;
}

std::optional<EarlyStopVerdict> SweepJudge::JudgeMedian(const std::string& item, int64_t step) {
  Curve& curve = curves_[item];
  auto end = curve.by_step.upper_bound(step);
  if (end == curve.by_step.begin()) return std::nullopt;
  double best = curve.by_step.begin()->second;
  for (auto it = curve.by_step.begin(); it != end; ++it) {
    if (Better(it->second, best)) best = it->second;
  }
  std::vector<std::pair<std::string, double>> others = ValuesAtStep(curves_, item, step);
  if (others.size() + 1 < static_cast<size_t>(spec_.min_items) || others.empty()) {
    return std::nullopt;
  }
  std::vector<double> sorted;
  for (const auto& [name, v] : others) sorted.push_back(v);
  std::sort(sorted.begin(), sorted.end());
  size_t m = sorted.size();
  double median = m % 2 == 1 ? sorted[m / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
  if (!Better(median, best)) {
    curve.kept = StrCat("best ", spec_.metric, " ", EarlyStopNumber(best), " at step ", step,
                        " is not worse than the median ", EarlyStopNumber(median), " of the other ",
                        m, m == 1 ? " item" : " items");
    return std::nullopt;
  }
  std::vector<std::pair<std::string, double>> better;
  for (const auto& [name, v] : others) {
    if (Better(v, best)) better.emplace_back(name, v);
  }
  return EarlyStopVerdict{
      item, step, best,
      StrCat("step ", step, ": best ", spec_.metric, " so far ", EarlyStopNumber(best),
             " is worse than the median ", EarlyStopNumber(median), " of the other ", m,
             m == 1 ? " item" : " items", " at that step; beaten by ",
             Beaten(std::move(better), spec_.maximize))};
}

std::string SweepJudge::Kept(const std::string& item) const {
  auto it = curves_.find(item);
  return it == curves_.end() ? std::string() : it->second.kept;
}

std::string SweepJudge::Beaten(std::vector<std::pair<std::string, double>> by, bool maximize) {
  std::stable_sort(by.begin(), by.end(), [maximize](const auto& a, const auto& b) {
    return maximize ? a.second > b.second : a.second < b.second;
  });
  constexpr size_t kShown = 5;
  std::vector<std::string> parts;
  for (size_t i = 0; i < by.size() && i < kShown; ++i) {
    parts.push_back(StrCat(by[i].first, " (", EarlyStopNumber(by[i].second), ")"));
  }
  std::string out = StrJoin(parts, ", ");
  if (by.size() > kShown) out += StrCat(" and ", by.size() - kShown, " more");
  return out;
}

}  // namespace longhaul::scheduler
