#include "stages/bench/bench_result.h"

#include <algorithm>
#include <map>

#include "core/fs.h"
#include "core/strings.h"
#include "stages/bench/stats.h"

namespace longhaul::stages {
namespace {

using nlohmann::json;

constexpr double kNsPerMs = 1e6;

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// A number at a path of a result, or nullopt.
std::optional<double> At(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return std::nullopt;
    auto it = cur->find(k);
    if (it == cur->end()) return std::nullopt;
    cur = &*it;
  }
  if (!cur->is_number()) return std::nullopt;
  return cur->get<double>();
}

json RecordToJson(const RequestRecord& r) {
  auto ms = [&](int64_t t) { return t < 0 ? json(nullptr) : json((t - r.planned_ns) / kNsPerMs); };
  json chunks = json::array();
  for (int64_t t : r.chunk_ns) chunks.push_back((t - r.planned_ns) / kNsPerMs);
  json j = {{"i", r.index},
            {"planned_ms", r.planned_ns / kNsPerMs},
            {"schedule_error_ms",
             r.dispatch_ns < 0 ? json(nullptr) : json((r.dispatch_ns - r.planned_ns) / kNsPerMs)},
            {"queue_ms", r.sent_ns < 0 || r.dispatch_ns < 0
                             ? json(nullptr)
                             : json((r.sent_ns - r.dispatch_ns) / kNsPerMs)},
            {"ttft_ms", ms(r.first_token_ns)},
            {"e2e_ms", ms(r.end_ns)},
            {"status", r.http_status},
            {"ok", r.ok},
            {"output_tokens", r.output_tokens},
            {"prompt_tokens", r.prompt_tokens < 0 ? json(nullptr) : json(r.prompt_tokens)},
            {"chunk_ms", std::move(chunks)}};
  if (r.per_chunk_tokens_known) j["chunk_tokens"] = r.chunk_tokens;
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

}  // namespace

json BuildBenchResult(const BenchOptions& options, const std::vector<RequestRecord>& records,
                      const RunFacts& facts, const SpecMetrics& spec, const json* baseline) {
  std::vector<double> ttft, e2e, tpot, itl_chunk, sched, queue;
  std::vector<std::pair<double, double>> itl_token;
  int64_t sent = 0, ok = 0, failed = 0, out_tokens = 0, prompt_tokens = 0;
  int64_t end_ns = 0, first_dispatch = -1, last_dispatch = -1, dispatched = 0;
  bool all_exact = true, any_even = false, any_usage = false;
  std::map<std::string, int64_t> errors;
  for (const auto& r : records) {
    if (r.dispatch_ns >= 0) {
      ++dispatched;
      if (first_dispatch < 0) first_dispatch = r.dispatch_ns;
      last_dispatch = std::max(last_dispatch, r.dispatch_ns);
      sched.push_back((r.dispatch_ns - r.planned_ns) / kNsPerMs);
    }
    if (r.sent_ns < 0) continue;
    ++sent;
    if (r.dispatch_ns >= 0) queue.push_back((r.sent_ns - r.dispatch_ns) / kNsPerMs);
    end_ns = std::max(end_ns, r.end_ns);
    if (!r.ok) {
      ++failed;
      ++errors[r.error.substr(0, 200)];
      continue;
    }
    ++ok;
    out_tokens += r.output_tokens;
    if (r.prompt_tokens > 0) prompt_tokens += r.prompt_tokens;
    any_usage |= r.tokens_from_usage;
    e2e.push_back((r.end_ns - r.planned_ns) / kNsPerMs);
    if (r.first_token_ns >= 0) {
      ttft.push_back((r.first_token_ns - r.planned_ns) / kNsPerMs);
      if (r.output_tokens >= 2) {
        tpot.push_back((r.end_ns - r.first_token_ns) / kNsPerMs /
                       static_cast<double>(r.output_tokens - 1));
      }
    }
    size_t chunks = r.chunk_ns.size();
    double even = chunks > 0 && r.tokens_from_usage
                      ? static_cast<double>(r.output_tokens) / static_cast<double>(chunks)
                      : 1.0;
    if (!r.per_chunk_tokens_known && chunks > 1) {
      all_exact = false;
      any_even |= r.tokens_from_usage;
    }
    for (size_t k = 1; k < chunks; ++k) {
      double gap = (r.chunk_ns[k] - r.chunk_ns[k - 1]) / kNsPerMs;
      itl_chunk.push_back(gap);
      double n = r.per_chunk_tokens_known ? static_cast<double>(r.chunk_tokens[k]) : even;
      if (n > 0) itl_token.emplace_back(gap / n, n);
    }
  }
  double span_s = end_ns / 1e9;
  auto per_s = [&](double v) { return span_s > 0 ? json(v / span_s) : json(nullptr); };

  json rate = json::object();
  rate["target"] = Opt(options.rate);
  if (!facts.planned_ns.empty()) {
    const auto& p = facts.planned_ns;
    rate["planned"] = p.size() >= 2 && p.back() > p.front()
                          ? json((p.size() - 1) * 1e9 / (p.back() - p.front()))
                          : json(nullptr);
    rate["achieved"] = dispatched >= 2 && last_dispatch > first_dispatch
                           ? json((dispatched - 1) * 1e9 / (last_dispatch - first_dispatch))
                           : json(nullptr);
  } else {
    rate["planned"] = nullptr;
    rate["achieved"] = per_s(static_cast<double>(sent));
  }
  rate["achieved_vs_planned"] =
      rate["planned"].is_number() && rate["achieved"].is_number()
          ? json(rate["achieved"].get<double>() / rate["planned"].get<double>())
          : json(nullptr);
  rate["achieved_vs_target"] = options.rate && rate["achieved"].is_number()
                                   ? json(rate["achieved"].get<double>() / *options.rate)
                                   : json(nullptr);

  std::string itl_source = ok == 0     ? "none"
                           : all_exact ? "usage_per_chunk"
                           : any_even  ? "even_split_of_usage"
                                       : "one_token_per_chunk";
  json errs = json::object();
  for (const auto& [msg, n] : errors) errs[msg] = n;

  json result = {
      {"schema", "longhaul.bench.v1"},
      {"config", BenchOptionsToJson(options)},
      {"workload", facts.workload},
      {"started_at_ms", facts.start_epoch_ms},
      {"interrupted", facts.interrupted},
      {"duration_s", span_s},
      {"requests",
       {{"planned", records.size()},
        {"sent", sent},
        {"completed", ok},
        {"failed", failed},
        {"connections_opened", facts.connections_opened}}},
      {"rate", rate},
      {"schedule_error_ms", SummaryToJson(Summarize(sched))},
      {"queue_ms", SummaryToJson(Summarize(queue))},
      {"throughput",
       {{"requests_per_s", per_s(static_cast<double>(ok))},
        {"output_tokens_per_s", per_s(static_cast<double>(out_tokens))},
        {"total_tokens_per_s", per_s(static_cast<double>(out_tokens + prompt_tokens))},
        {"output_tokens", out_tokens},
        {"prompt_tokens", prompt_tokens}}},
      {"tokens_source", any_usage ? "usage" : "content_chunks"},
      {"latency_ms",
       {{"ttft", SummaryToJson(Summarize(ttft))},
        {"tpot", SummaryToJson(Summarize(tpot))},
        {"itl_per_chunk", SummaryToJson(Summarize(itl_chunk))},
        {"itl_per_token", SummaryToJson(SummarizeWeighted(itl_token))},
        {"e2e", SummaryToJson(Summarize(e2e))}}},
      {"itl_per_token_source", itl_source},
      {"spec_decoding", SpecMetricsToJson(spec)},
      {"errors", errs},
  };
  if (baseline != nullptr) {
    auto base_tps = At(*baseline, {"throughput", "output_tokens_per_s"});
    auto base_tpot = At(*baseline, {"latency_ms", "tpot", "mean"});
    auto our_tps = At(result, {"throughput", "output_tokens_per_s"});
    auto our_tpot = At(result, {"latency_ms", "tpot", "mean"});
    result["baseline"] = {
        {"path", options.baseline_file},
        {"output_tokens_per_s", Opt(base_tps)},
        {"tpot_ms_mean", Opt(base_tpot)},
        {"speedup_output_throughput",
         base_tps && our_tps && *base_tps > 0 ? json(*our_tps / *base_tps) : json(nullptr)},
        {"speedup_tpot",
         base_tpot && our_tpot && *our_tpot > 0 ? json(*base_tpot / *our_tpot) : json(nullptr)}};
  }
  if (options.keep_records) {
    json recs = json::array();
    for (const auto& r : records) recs.push_back(RecordToJson(r));
    result["records"] = std::move(recs);
  }
  return result;
}

Result<json> LoadBaseline(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(StrCat("baseline ", path, ": not a JSON object"));
  }
  if (j.value("schema", "") != "longhaul.bench.v1") {
    return absl::InvalidArgumentError(
        StrCat("baseline ", path, ": not an lh-bench result (schema is not longhaul.bench.v1)"));
  }
  if (!At(j, {"throughput", "output_tokens_per_s"})) {
    return absl::InvalidArgumentError(
        StrCat("baseline ", path, ": throughput.output_tokens_per_s is missing or null"));
  }
  return j;
}

std::vector<std::pair<std::string, double>> ResultFigures(const json& r) {
  std::vector<std::pair<std::string, double>> out;
  auto add = [&](std::string name, std::optional<double> v) {
    if (v) out.emplace_back(std::move(name), *v);
  };
  add("completed_requests", At(r, {"requests", "completed"}));
  add("failed_requests", At(r, {"requests", "failed"}));
  add("duration_s", At(r, {"duration_s"}));
  add("target_rate", At(r, {"rate", "target"}));
  add("planned_rate", At(r, {"rate", "planned"}));
  add("achieved_rate", At(r, {"rate", "achieved"}));
  add("achieved_vs_target_rate", At(r, {"rate", "achieved_vs_target"}));
  add("achieved_vs_planned_rate", At(r, {"rate", "achieved_vs_planned"}));
  for (const char* q : {"p50", "p99", "max"}) {
    add(StrCat("schedule_error_ms_", q), At(r, {"schedule_error_ms", q}));
  }
  add("queue_ms_mean", At(r, {"queue_ms", "mean"}));
  add("queue_ms_p99", At(r, {"queue_ms", "p99"}));
  add("request_throughput", At(r, {"throughput", "requests_per_s"}));
  add("output_throughput", At(r, {"throughput", "output_tokens_per_s"}));
  add("total_token_throughput", At(r, {"throughput", "total_tokens_per_s"}));
  for (const char* m : {"ttft", "tpot", "itl_per_chunk", "itl_per_token", "e2e"}) {
    for (const char* q : {"mean", "p50", "p90", "p99"}) {
      add(StrCat(m, "_ms_", q), At(r, {"latency_ms", m, q}));
    }
  }
  add("accept_rate", At(r, {"spec_decoding", "acceptance_rate"}));
  add("accept_length", At(r, {"spec_decoding", "acceptance_length"}));
  if (r.contains("spec_decoding") && r["spec_decoding"].contains("per_position_acceptance")) {
    const json& pos = r["spec_decoding"]["per_position_acceptance"];
    for (size_t i = 0; i < pos.size(); ++i) {
      if (pos[i].is_number()) out.emplace_back(StrCat("accept_rate_pos_", i), pos[i].get<double>());
    }
  }
  add("speedup_output_throughput", At(r, {"baseline", "speedup_output_throughput"}));
  add("speedup_tpot", At(r, {"baseline", "speedup_tpot"}));
  return out;
}

}  // namespace longhaul::stages
