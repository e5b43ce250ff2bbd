#include "stages/bench/bench_app.h"

#include <signal.h>
#include <sys/resource.h>

#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <filesystem>

#include "core/fs.h"
#include "core/logging.h"
#include "core/net/http_client.h"
#include "core/strings.h"
#include "stages/bench/bench_result.h"
#include "stages/bench/load_runner.h"
#include "stages/bench/schedule.h"
#include "stages/bench/spec_metrics.h"
#include "stages/bench/workload.h"
#include "stages/common/endpoint.h"

namespace longhaul::stages {
namespace {

using nlohmann::json;

constexpr auto kProgressEvery = std::chrono::milliseconds(100);

// An open-loop run at high rates holds one socket per request in flight.
void RaiseFileLimit() {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
}

std::string Num(const json& j, std::initializer_list<const char*> path, const char* fmt) {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object() || !cur->contains(k)) return "-";
    cur = &(*cur)[k];
  }
  if (!cur->is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, cur->get<double>());
  return buf;
}

}  // namespace

Result<BenchOutcome> RunBench(const BenchOptions& o, EventWriter& events) {
  auto log = GetLogger("bench");
  RETURN_IF_ERROR(ValidateBenchOptions(o));
  ASSIGN_OR_RETURN(net::HttpUrl url, ParseEndpoint(o.endpoint));
  std::optional<json> baseline;
  if (!o.baseline_file.empty()) {
    ASSIGN_OR_RETURN(baseline, LoadBaseline(o.baseline_file));
  }
  ASSIGN_OR_RETURN(Workload workload, BuildWorkload(o));
  log->info("workload: {}", workload.description);

  RunPlan plan;
  plan.target = url.Target(OpenAiApiPath(o.api));
  plan.bodies = &workload.bodies;
  plan.concurrency = o.concurrency.value_or(0);
  plan.request_timeout_ms = static_cast<int64_t>(o.request_timeout_s * 1000);
  if (o.rate) {
    ScheduleSpec spec;
    spec.rate = *o.rate;
    spec.poisson = o.poisson;
    spec.count = o.num_requests;
    spec.duration_s = o.duration_s;
    spec.seed = static_cast<uint64_t>(o.seed);
    plan.planned_ns = PlanSendTimes(spec);
  } else {
    plan.closed_loop_count = o.num_requests.value_or(0);
    if (o.duration_s) plan.closed_loop_duration_ns = static_cast<int64_t>(*o.duration_s * 1e9);
  }
  std::optional<double> total;
  if (!plan.planned_ns.empty()) {
    total = static_cast<double>(plan.planned_ns.size());
  } else if (plan.closed_loop_count > 0) {
    total = static_cast<double>(plan.closed_loop_count);
  }

  ServerScrape before = ScrapeServer(url, o.metrics_style);
  if (o.metrics_style != MetricsStyle::kNone && !before.error.empty()) {
    log->warn("{}; speculative-decoding figures will be missing", before.error);
    events.Message("warn", before.error);
  }

  RaiseFileLimit();
  boost::asio::io_context io(1);
  net::HttpClient client(io, url);
  auto last_progress = std::chrono::steady_clock::now() - kProgressEvery;
  int64_t failures = 0;
  int64_t ended = 0;
  LoadRunner runner(io, client, plan, [&](const RequestRecord& r, int64_t done) {
    if (!r.ok && failures++ < 5) log->warn("request {} failed: {}", r.index, r.error);
    ended = done;
    auto now = std::chrono::steady_clock::now();
    bool last = total && static_cast<double>(done) >= *total;
    if (last || now - last_progress >= kProgressEvery) {
      last_progress = now;
      events.Progress(static_cast<double>(done), total, "requests");
    }
  });
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    log->warn("signal {}: stopping; writing a partial result", sig);
    runner.Stop();
  });
  log->info("running {} requests against {}{}",
            total ? StrCat(static_cast<int64_t>(*total)) : "open-ended", url.Origin(), plan.target);
  // The pending signal wait would keep the loop alive past the end of the plan.
  runner.OnFinished([&] { signals.cancel(); });
  runner.Run();
  events.Progress(static_cast<double>(ended), total, "requests");  // the coalescing may skip it
  ServerScrape after = ScrapeServer(url, o.metrics_style);
  SpecMetrics spec = ComputeSpecMetrics(before, after, o.metrics_style);

  RunFacts facts;
  facts.planned_ns = plan.planned_ns;
  facts.start_epoch_ms = runner.start_epoch_ms();
  facts.interrupted = runner.interrupted();
  facts.connections_opened = client.stats().connections_opened;
  facts.workload = workload.description;
  BenchOutcome out;
  out.result = BuildBenchResult(o, runner.records(), facts, spec, baseline ? &*baseline : nullptr);
  out.interrupted = runner.interrupted();
  std::string text = out.result.dump(1, ' ', false, json::error_handler_t::replace);
  RETURN_IF_ERROR(Annotate(WriteFileAtomic(o.out_file, text), "writing the result"));
  for (const auto& [name, value] : ResultFigures(out.result)) events.Metric(name, value);
  events.Artifact("bench_result", o.out_file, static_cast<int64_t>(text.size()));
  // Absolute: dependents run in other directories.
  events.Output("result", std::filesystem::absolute(o.out_file).lexically_normal().string());

  double sent = out.result["requests"]["sent"].get<double>();
  double failed = out.result["requests"]["failed"].get<double>();
  double completed = out.result["requests"]["completed"].get<double>();
  out.too_many_failures = completed == 0 || (sent > 0 && failed / sent > o.max_failed_fraction);
  return out;
}

std::string FormatBenchSummary(const json& r) {
  std::string s;
  s += StrCat("requests: ", Num(r, {"requests", "completed"}, "%.0f"), " ok, ",
              Num(r, {"requests", "failed"}, "%.0f"), " failed, in ",
              Num(r, {"duration_s"}, "%.2f"), " s\n");
  s += StrCat("rate: target ", Num(r, {"rate", "target"}, "%.1f"), "/s, achieved ",
              Num(r, {"rate", "achieved"}, "%.1f"), "/s; schedule error p50 ",
              Num(r, {"schedule_error_ms", "p50"}, "%.3f"), " ms, p99 ",
              Num(r, {"schedule_error_ms", "p99"}, "%.3f"), " ms\n");
  s += StrCat("throughput: ", Num(r, {"throughput", "requests_per_s"}, "%.2f"), " req/s, ",
              Num(r, {"throughput", "output_tokens_per_s"}, "%.1f"), " output tok/s\n");
  for (const char* m : {"ttft", "tpot", "itl_per_chunk", "itl_per_token", "e2e"}) {
    s += StrCat(m, " ms: mean ", Num(r, {"latency_ms", m, "mean"}, "%.3f"), "  p50 ",
                Num(r, {"latency_ms", m, "p50"}, "%.3f"), "  p90 ",
                Num(r, {"latency_ms", m, "p90"}, "%.3f"), "  p99 ",
                Num(r, {"latency_ms", m, "p99"}, "%.3f"), "\n");
  }
  s += StrCat("spec decoding (", r["spec_decoding"].value("style", "none"), "): acceptance rate ",
              Num(r, {"spec_decoding", "acceptance_rate"}, "%.4f"), ", acceptance length ",
              Num(r, {"spec_decoding", "acceptance_length"}, "%.3f"), "\n");
  if (r.contains("baseline")) {
    s += StrCat("vs baseline: output throughput x",
                Num(r, {"baseline", "speedup_output_throughput"}, "%.3f"), ", TPOT x",
                Num(r, {"baseline", "speedup_tpot"}, "%.3f"), "\n");
  }
  return s;
}

}  // namespace longhaul::stages
