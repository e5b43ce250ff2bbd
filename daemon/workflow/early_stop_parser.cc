#include "daemon/workflow/early_stop_parser.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/strings.h"

namespace longhaul::workflow {
namespace {

const std::vector<std::string> kEarlyStopKeys = {"metric", "mode", "rule",
                                                 "rungs",  "eta",  "min_items"};

// `rungs: [1, 2, 4]`: steps >= 0, strictly ascending.
std::optional<std::vector<int64_t>> ReadRungs(const MapEntry& f, std::string_view what,
                                              Diagnostics& diag) {
  if (!ExpectList(f, what, diag)) return std::nullopt;
  if (f.value.size() == 0) {
    diag.Add(f.value_pos, StrCat(what, ": expected at least one step"));
    return std::nullopt;
  }
  std::vector<int64_t> rungs;
  bool ok = true;
  for (size_t i = 0; i < f.value.size(); ++i) {
    YamlNode item = f.value[i];
    SourcePos pos = item.IsNull() ? f.value_pos : PosOf(item);
    std::optional<int64_t> step =
        ReadInt(item, pos, ElementName(what, i), 0, INT64_C(1) << 53, diag);
    if (!step) {
      ok = false;
      continue;
    }
    if (!rungs.empty() && *step <= rungs.back()) {
      diag.Add(pos, StrCat(ElementName(what, i), ": ", *step, " after ", rungs.back(),
                           ": rungs are steps in ascending order"));
      ok = false;
      continue;
    }
    rungs.push_back(*step);
  }
  if (!ok) return std::nullopt;
  return rungs;
}

}  // namespace

std::optional<EarlyStopSpec> ReadEarlyStop(const MapEntry& e, std::string_view stage,
                                           Diagnostics& diag) {
  std::string ctx = StrCat("early_stop in stage '", stage, "'");
  if (!ExpectMap(e, ctx, diag)) return std::nullopt;
  EarlyStopSpec spec;
  spec.sweep = std::string(stage);
  bool ok = true, has_metric = false, has_rungs = false;
  SourcePos eta_pos, min_items_pos, rungs_pos;
  for (const MapEntry& f : ReadMap(e.value, ctx, "key", &kEarlyStopKeys, diag)) {
    std::string what = StrCat("early_stop.", f.key, " in stage '", stage, "'");
    if (f.key == "metric") {
      has_metric = true;
      std::optional<Scalar> v = ReadScalar(f, what, diag);
      if (v && StripWhitespace(v->text).empty()) {
        diag.Add(f.value_pos, StrCat(what, ": expected a metric name"));
        v.reset();
      }
      if (v) spec.metric = v->text;
      ok = ok && v.has_value();
    } else if (f.key == "mode") {
      std::optional<Scalar> v = ReadScalar(f, what, diag);
      if (v && v->text != "min" && v->text != "max") {
        diag.Add(f.value_pos, StrCat(what, ": expected min or max, got '", v->text, "'"));
        v.reset();
      }
      if (v) spec.maximize = v->text == "max";
      ok = ok && v.has_value();
    } else if (f.key == "rule") {
      std::optional<Scalar> v = ReadScalar(f, what, diag);
      if (v && v->text != "asha" && v->text != "median") {
        diag.Add(f.value_pos, StrCat(what, ": expected asha or median, got '", v->text, "'",
                                     DidYouMean(v->text, {"asha", "median"})));
        v.reset();
      }
      if (v)
        spec.rule = v->text == "median" ? EarlyStopSpec::Rule::kMedian : EarlyStopSpec::Rule::kAsha;
      ok = ok && v.has_value();
    } else if (f.key == "rungs") {
      has_rungs = true;
      rungs_pos = f.key_pos;
      std::optional<std::vector<int64_t>> rungs = ReadRungs(f, what, diag);
      if (rungs) spec.rungs = std::move(*rungs);
      ok = ok && rungs.has_value();
    } else if (f.key == "eta") {
      eta_pos = f.key_pos;
      std::optional<int64_t> v = ReadInt(f, what, 2, 1000, diag);
      if (v) spec.eta = static_cast<int>(*v);
      ok = ok && v.has_value();
    } else if (f.key == "min_items") {
      min_items_pos = f.key_pos;
      std::optional<int64_t> v = ReadInt(f, what, 2, 1'000'000, diag);
      if (v) spec.min_items = static_cast<int>(*v);
      ok = ok && v.has_value();
    }
  }
  if (!has_metric) {
    diag.Add(e.key_pos, StrCat(ctx, ": missing required key 'metric'"));
    ok = false;
  }
  bool asha = spec.rule == EarlyStopSpec::Rule::kAsha;
  if (asha && !has_rungs) {
    diag.Add(e.key_pos, StrCat(ctx, ": rule asha needs rungs (the steps it judges at)"));
    ok = false;
  }
  if (asha && min_items_pos.line > 0) {
    diag.Add(min_items_pos, StrCat(ctx, ": min_items is for rule median; asha judges by eta"));
    ok = false;
  }
  if (!asha && eta_pos.line > 0) {
    diag.Add(eta_pos, StrCat(ctx, ": eta is for rule asha; median judges by min_items"));
    ok = false;
  }
  if (!ok) return std::nullopt;
  return spec;
}

}  // namespace longhaul::workflow
