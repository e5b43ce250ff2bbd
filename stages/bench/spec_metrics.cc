#include "stages/bench/spec_metrics.h"

#include <algorithm>
#include <cstdlib>

#include "core/net/http_client.h"
#include "core/strings.h"

namespace longhaul::stages {
namespace {

constexpr char kDrafts[] = "vllm:spec_decode_num_drafts";
constexpr char kDraftTokens[] = "vllm:spec_decode_num_draft_tokens";
constexpr char kAccepted[] = "vllm:spec_decode_num_accepted_tokens";
constexpr char kAcceptedPerPos[] = "vllm:spec_decode_num_accepted_tokens_per_pos";
constexpr char kVllmGenTokens[] = "vllm:generation_tokens";
constexpr char kSglAcceptLength[] = "sglang:spec_accept_length";
constexpr char kSglAcceptRate[] = "sglang:spec_accept_rate";
constexpr char kSglGenTokens[] = "sglang:generation_tokens";

std::optional<double> Delta(const PromSnapshot& b, const PromSnapshot& a, const char* family) {
  auto vb = b.Counter(family), va = a.Counter(family);
  if (!va) return std::nullopt;
  return CounterDelta(vb.value_or(0), *va);
}

bool HasAvgAcceptLength(const ServerScrape& s) {
  if (!s.server_info || !s.server_info->is_object()) return false;
  auto states = s.server_info->find("internal_states");
  return states != s.server_info->end() && states->is_array() && !states->empty() &&
         (*states)[0].is_object() && (*states)[0].contains("avg_spec_accept_length") &&
         (*states)[0]["avg_spec_accept_length"].is_number();
}

void ComputeVllm(const PromSnapshot& b, const PromSnapshot& a, SpecMetrics& m) {
  m.style = "vllm";
  m.drafts = Delta(b, a, kDrafts).value_or(0);
  m.draft_tokens = Delta(b, a, kDraftTokens).value_or(0);
  m.accepted_tokens = Delta(b, a, kAccepted).value_or(0);
  if (m.draft_tokens > 0) m.acceptance_rate = m.accepted_tokens / m.draft_tokens;
  if (m.drafts > 0) {
    m.acceptance_length = 1.0 + m.accepted_tokens / m.drafts;
    auto pb = b.ByLabel(kAcceptedPerPos, "position");
    auto pa = a.ByLabel(kAcceptedPerPos, "position");
    std::vector<std::pair<long, double>> pos;
    for (const auto& [k, v] : pa) {
      auto it = pb.find(k);
      pos.emplace_back(std::strtol(k.c_str(), nullptr, 10),
                       CounterDelta(it == pb.end() ? 0 : it->second, v) / m.drafts);
    }
    std::sort(pos.begin(), pos.end());
    for (const auto& [p, v] : pos) m.per_position.push_back(v);
  } else {
    m.note = "no drafts during the run (speculative decoding off, or no requests served)";
  }
  m.server_generation_tokens = Delta(b, a, kVllmGenTokens);
}

void ComputeSglang(const ServerScrape& before, const ServerScrape& after, SpecMetrics& m) {
  m.style = "sglang";
  if (after.metrics) {
    m.sglang_accept_length_gauge = after.metrics->Sum(kSglAcceptLength);
    m.sglang_accept_rate_gauge = after.metrics->Sum(kSglAcceptRate);
    if (before.metrics)
      m.server_generation_tokens = Delta(*before.metrics, *after.metrics, kSglGenTokens);
  }
  if (after.server_info && after.server_info->is_object()) {
    const auto& info = *after.server_info;
    auto states = info.find("internal_states");
    if (states != info.end() && states->is_array() && !states->empty() &&
        (*states)[0].is_object()) {
      auto v = (*states)[0].find("avg_spec_accept_length");
      if (v != (*states)[0].end() && v->is_number())
        m.sglang_avg_spec_accept_length = v->get<double>();
    }
  }
  m.acceptance_rate = m.sglang_accept_rate_gauge;
  m.acceptance_length =
      m.sglang_accept_length_gauge ? m.sglang_accept_length_gauge : m.sglang_avg_spec_accept_length;
  m.note =
      "SGLang exposes gauges of the latest batch, not counters: the figures describe the end "
      "of the run, and avg_spec_accept_length is cumulative since the server started";
}

}  // namespace

Result<MetricsStyle> ParseMetricsStyle(std::string_view name) {
  if (name == "auto") return MetricsStyle::kAuto;
  if (name == "vllm") return MetricsStyle::kVllm;
  if (name == "sglang") return MetricsStyle::kSglang;
  if (name == "none") return MetricsStyle::kNone;
  return absl::InvalidArgumentError(
      StrCat("metrics style '", name, "': expected vllm, sglang, auto or none"));
}

std::string_view MetricsStyleName(MetricsStyle style) {
  switch (style) {
    case MetricsStyle::kAuto:
      return "auto";
    case MetricsStyle::kVllm:
      return "vllm";
    case MetricsStyle::kSglang:
      return "sglang";
    case MetricsStyle::kNone:
      return "none";
  }
  return "?";
}

ServerScrape ScrapeServer(const net::HttpUrl& url, MetricsStyle style) {
  ServerScrape out;
  if (style == MetricsStyle::kNone) return out;
  net::HttpRequest req;
  req.target = url.Target("/metrics");
  req.timeouts.total_ms = 10'000;
  auto res = net::HttpFetch(url, req);
  if (!res.ok()) {
    out.error = StrCat("GET /metrics: ", res.status().message());
  } else if (res->status() != 200) {
    out.error = StrCat("GET /metrics: HTTP ", res->status());
  } else {
    auto snap = PromSnapshot::Parse(res->body);
    if (snap.ok()) {
      out.metrics = std::move(*snap);
    } else {
      out.error = StrCat("GET /metrics: ", snap.status().message());
    }
  }
  if (style == MetricsStyle::kSglang || style == MetricsStyle::kAuto) {
    req.target = url.Target("/get_server_info");
    auto info = net::HttpFetch(url, req);
    if (info.ok() && info->status() == 200) {
      auto j = nlohmann::json::parse(info->body, nullptr, false);
      if (!j.is_discarded()) out.server_info = std::move(j);
    }
  }
  return out;
}

SpecMetrics ComputeSpecMetrics(const ServerScrape& before, const ServerScrape& after,
                               MetricsStyle style) {
  SpecMetrics m;
  if (style == MetricsStyle::kNone) {
    m.note = "--metrics-style none";
    return m;
  }
  if (!before.metrics || !after.metrics) {
    m.note =
        StrCat("server metrics unavailable: ", !before.error.empty() ? before.error : after.error);
    if (style == MetricsStyle::kSglang ||
        (style == MetricsStyle::kAuto && HasAvgAcceptLength(after))) {
      if (after.server_info) ComputeSglang(before, after, m);
    }
    return m;
  }
  if (style == MetricsStyle::kAuto) {
    if (after.metrics->Counter(kDrafts)) {
      style = MetricsStyle::kVllm;
    } else if (after.metrics->Has(kSglAcceptLength) || HasAvgAcceptLength(after)) {
      style = MetricsStyle::kSglang;
    } else {
      m.note = "no speculative-decoding metrics found (neither vLLM's nor SGLang's names)";
      if (auto d = Delta(*before.metrics, *after.metrics, kVllmGenTokens)) {
        m.server_generation_tokens = d;
      }
      return m;
    }
  }
  if (style == MetricsStyle::kVllm) {
    ComputeVllm(*before.metrics, *after.metrics, m);
  } else {
    ComputeSglang(before, after, m);
  }
  return m;
}

nlohmann::json SpecMetricsToJson(const SpecMetrics& m) {
  auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  nlohmann::json j = {{"style", m.style},
                      {"note", m.note},
                      {"acceptance_rate", opt(m.acceptance_rate)},
                      {"acceptance_length", opt(m.acceptance_length)},
                      {"server_generation_tokens", opt(m.server_generation_tokens)}};
  if (m.style == "vllm") {
    j["per_position_acceptance"] = m.per_position;
    j["drafts"] = m.drafts;
    j["draft_tokens"] = m.draft_tokens;
    j["accepted_tokens"] = m.accepted_tokens;
  }
  if (m.style == "sglang") {
    j["spec_accept_length_gauge"] = opt(m.sglang_accept_length_gauge);
    j["spec_accept_rate_gauge"] = opt(m.sglang_accept_rate_gauge);
    j["avg_spec_accept_length"] = opt(m.sglang_avg_spec_accept_length);
  }
  return j;
}

}  // namespace longhaul::stages
