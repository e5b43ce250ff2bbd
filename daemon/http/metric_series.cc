#include "daemon/http/metric_series.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/strings.h"
#include "daemon/http/json.h"

namespace longhaul::http {
namespace {

// The ids of `runs=` (comma lists, the parameter may repeat), in the order asked, once each.
Result<std::vector<int64_t>> SeriesRunIds(const Request& req) {
  std::vector<int64_t> ids;
  for (const std::string& list : req.QueryAll("runs")) {
    for (const std::string& term : StrSplit(list, ',')) {
      if (term.empty()) continue;
      int64_t id = 0;
      auto [end, ec] = std::from_chars(term.data(), term.data() + term.size(), id);
      if (ec != std::errc() || end != term.data() + term.size() || id <= 0) {
        return absl::InvalidArgumentError(
            StrCat("query parameter 'runs': '", term, "' is not a run id"));
      }
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
  }
  if (ids.empty()) {
    return absl::InvalidArgumentError("query parameter 'runs' is required (e.g. runs=3,4)");
  }
  if (ids.size() > static_cast<size_t>(kMaxSeriesRuns)) {
    return absl::InvalidArgumentError(StrCat("query parameter 'runs': at most ", kMaxSeriesRuns,
                                             " runs in one request (", ids.size(), " asked)"));
  }
  return ids;
}

// A value as JSON: a number, or null for NaN and the infinities (JSON has none).
nlohmann::json SeriesValue(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// One run's series of `q.stage()`'s metric `q.name()`: every point read, thinned to `points`.
Result<nlohmann::json> OneSeries(rpc::ClientApi* api, v1::ListMetricsRequest q, int points) {
  std::vector<const v1::Metric*> all;
  std::vector<v1::ListMetricsResponse> pages;
  int64_t scanned = 0;
  bool truncated = false;
  for (;;) {
    Result<v1::ListMetricsResponse> page = api->ListMetrics(q);
    if (!page.ok()) return page.status();
    pages.push_back(std::move(*page));
    const v1::ListMetricsResponse& p = pages.back();
    scanned += p.points_size();
    q.set_after(p.next_cursor());
    if (p.points_size() < q.limit()) break;
    if (scanned >= kMaxScannedPoints) {
      truncated = true;
      break;
    }
  }
  for (const v1::ListMetricsResponse& p : pages) {
    for (const v1::Metric& m : p.points()) all.push_back(&m);
  }
  nlohmann::json steps = nlohmann::json::array();
  nlohmann::json values = nlohmann::json::array();
  nlohmann::json ts = nlohmann::json::array();
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (const v1::Metric* m : all) {
    if (std::isnan(m->value())) continue;
    lo = std::min(lo, m->value());
    hi = std::max(hi, m->value());
  }
  size_t n = all.size();
  size_t keep = std::min(n, static_cast<size_t>(points));
  for (size_t i = 0; i < keep; ++i) {
    // Evenly spaced, the first and the last point always among them.
    size_t at = keep == 1 ? n - 1 : (i * (n - 1) + (keep - 1) / 2) / (keep - 1);
    const v1::Metric& m = *all[at];
    steps.push_back(m.step());
    values.push_back(SeriesValue(m.value()));
    ts.push_back(m.ts_ms());
  }
  nlohmann::json s = {{"total_points", n}, {"thinned", keep < n}, {"truncated", truncated},
                      {"steps", steps},    {"values", values},    {"ts_ms", ts},
                      {"last", nullptr},   {"min", nullptr},      {"max", nullptr}};
  if (n > 0) s["last"] = SeriesValue(all.back()->value());
  if (lo <= hi) {
    s["min"] = SeriesValue(lo);
    s["max"] = SeriesValue(hi);
  }
  return s;
}

}  // namespace

Response MetricSeries(rpc::ClientApi* api, const Request& req) {
  if (req.method != "GET") {
    Response r = ErrorResponse(405, absl::StatusCode::kInvalidArgument,
                               StrCat(req.method, " ", req.path, ": use GET"));
    r.headers.emplace_back("Allow", "GET");
    return r;
  }
  std::string metric = req.Query("metric").value_or("");
  size_t dot = metric.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == metric.size()) {
    return ErrorResponse(absl::InvalidArgumentError(
        StrCat("query parameter 'metric': '", metric, "' must be STAGE.NAME, e.g. finetune.loss")));
  }
  Result<std::vector<int64_t>> ids = SeriesRunIds(req);
  if (!ids.ok()) return ErrorResponse(ids.status());
  int points = kDefaultSeriesPoints;
  if (std::optional<std::string> p = req.Query("points")) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(p->data(), p->data() + p->size(), v);
    if (ec != std::errc() || end != p->data() + p->size()) {
      return ErrorResponse(absl::InvalidArgumentError(
          StrCat("query parameter 'points': '", *p, "' is not an integer")));
    }
    points = static_cast<int>(std::clamp<int64_t>(v, 2, kMaxSeriesPoints));
  }
  nlohmann::json series = nlohmann::json::array();
  for (int64_t id : *ids) {
    v1::ListMetricsRequest q;
    q.set_run_id(id);
    q.set_stage(metric.substr(0, dot));
    q.set_name(metric.substr(dot + 1));
    q.set_limit(10000);
    Result<nlohmann::json> s = OneSeries(api, q, points);
    if (!s.ok() && s.status().code() != absl::StatusCode::kNotFound) {
      return ErrorResponse(s.status());
    }
    nlohmann::json entry = s.ok() ? std::move(*s) : nlohmann::json{{"error", s.status().message()}};
    entry["run_id"] = id;
    series.push_back(std::move(entry));
  }
  nlohmann::json body = {{"metric", metric}, {"points", points}, {"series", std::move(series)}};
  Response r;
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

}  // namespace longhaul::http
