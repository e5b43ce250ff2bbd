// GET /api/v1/metric-series?metric=STAGE.NAME&runs=1,2,3&points=1000: one metric's points in
// many runs in one answer, for the UI's charts across runs (docs/http-api.md, "One metric
// across runs"). Bounded: at most kMaxSeriesRuns runs; each series is thinned to `points`
// (at most kMaxSeriesPoints) evenly spaced points that keep the last one, and at most
// kMaxScannedPoints of a run are read (`truncated` says so). `last`, `min` and `max` are over
// every point read, thinned or not. A run, or a run without that stage, is an `error` of its
// series, not of the request: the other runs still answer.
#pragma once

#include "daemon/http/message.h"
#include "daemon/rpc/client_api.h"

namespace longhaul::http {

inline constexpr int kMaxSeriesRuns = 100;
inline constexpr int kDefaultSeriesPoints = 1000;
inline constexpr int kMaxSeriesPoints = 5000;
inline constexpr int kMaxScannedPoints = 200'000;

Response MetricSeries(rpc::ClientApi* api, const Request& request);

}  // namespace longhaul::http
