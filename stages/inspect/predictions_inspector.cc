#include "stages/inspect/predictions_inspector.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/net/http_client.h"
#include "core/strings.h"
#include "stages/bench/spec_metrics.h"
#include "stages/common/endpoint.h"
#include "stages/common/jsonl.h"
#include "stages/common/openai.h"

namespace longhaul::inspect {
namespace {

using nlohmann::json;
using stages::ChatMessage;

const char kPredictionsSection[] = "predictions";

struct Prompt {
  std::string id;
  std::vector<ChatMessage> messages;
};

// Used without --prompts: general questions any chat model answers at some length.
std::vector<Prompt> BuiltinPrompts() {
  const char* qs[] = {"What is the capital of France, and what is it known for?",
                      "Explain why the sky is blue.",
                      "How does a bridge carry its load?",
                      "Write a short function that sorts a list of numbers.",
                      "Think step by step: what is 17 times 23?",
                      "Describe the water cycle.",
                      "Give three tips for writing clear documentation.",
                      "Summarize the causes of the seasons on Earth."};
  std::vector<Prompt> out;
  for (int i = 0; i < 8; ++i) out.push_back({StrCat("builtin-", i), {{"user", qs[i]}}});
  return out;
}

Result<std::vector<Prompt>> LoadPrompts(const std::string& path) {
  if (path.empty()) return BuiltinPrompts();
  auto convs = stages::ReadConversations(path);
  if (!convs.ok()) return Annotate(convs.status(), "--prompts");
  std::vector<Prompt> out;
  for (const auto& c : *convs) {
    Prompt p{c.id, {}};
    for (const auto& m : c.messages) {
      if (m.role == "assistant") break;
      p.messages.push_back({m.role, m.content});
    }
    bool has_user = false;
    for (const auto& m : p.messages) has_user |= m.role == "user";
    if (has_user) out.push_back(std::move(p));
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(StrCat("--prompts ", path, ": no record has a user turn"));
  }
  return out;
}

Result<net::HttpUrl> ParseUrl(const std::string& flag, const std::string& url) {
  if (url.empty()) return absl::InvalidArgumentError(StrCat(flag, " is required"));
  auto u = stages::ParseEndpoint(url);
  if (!u.ok()) return Annotate(u.status(), flag);
  return u;
}

// The first model a server lists at /v1/models.
Result<std::string> ServedModel(const std::string& flag, const net::HttpUrl& url) {
  net::HttpRequest req;
  req.target = url.Target("/v1/models");
  req.timeouts.total_ms = 30'000;
  auto res = net::HttpFetch(url, req);
  if (!res.ok()) {
    return absl::UnavailableError(
        StrCat(flag, " ", url.Origin(), ": GET /v1/models: ", res.status().message()));
  }
  if (res->status() != 200) {
    return absl::UnavailableError(StrCat(flag, " ", url.Origin(), ": GET /v1/models: HTTP ",
                                         res->status(), ": ", stages::ErrorBodyText(res->body)));
  }
  json doc = json::parse(res->body, nullptr, false);
  if (doc.is_object() && doc.contains("data") && doc["data"].is_array() && !doc["data"].empty() &&
      doc["data"][0].is_object() && doc["data"][0].contains("id") &&
      doc["data"][0]["id"].is_string()) {
    return doc["data"][0]["id"].get<std::string>();
  }
  return absl::InvalidArgumentError(
      StrCat(flag, " ", url.Origin(), ": /v1/models lists no model; pass --model"));
}

struct Output {
  Status status;
  stages::Completion completion;
};

Output Generate(const net::HttpUrl& url, const Prompt& p, const std::string& model,
                const PredictionOptions& o, stages::OpenAiApi api) {
  stages::GenerationParams params;
  params.model = model;
  params.max_tokens = o.max_tokens;
  params.temperature = 0.0;
  params.seed = 0;
  params.stream = false;
  net::HttpRequest req;
  req.method = "POST";
  req.target = url.Target(stages::OpenAiApiPath(api));
  if (api == stages::OpenAiApi::kChat) {
    req.body = stages::BuildChatRequest(p.messages, params);
  } else {
    std::string text;
    for (const auto& m : p.messages) text += (text.empty() ? "" : "\n") + m.content;
    req.body = stages::BuildCompletionRequest(text, params);
  }
  req.timeouts.total_ms = static_cast<int64_t>(o.request_timeout_s * 1000);
  Output out;
  auto res = net::HttpFetch(url, req);
  if (!res.ok()) {
    out.status = res.status();
  } else if (res->status() != 200) {
    out.status = absl::UnavailableError(
        StrCat("HTTP ", res->status(), ": ", stages::ErrorBodyText(res->body)));
  } else {
    auto c = stages::ParseCompletionResponse(res->body);
    if (c.ok()) {
      out.completion = std::move(*c);
    } else {
      out.status = c.status();
    }
  }
  return out;
}

std::vector<std::string> Tokens(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string Near(const std::vector<std::string>& toks, size_t at) {
  std::string out;
  size_t from = at >= 4 ? at - 4 : 0;
  for (size_t i = from; i < std::min(toks.size(), at + 4); ++i) {
    if (!out.empty()) out += ' ';
    out += i == at ? StrCat("[", toks[i], "]") : toks[i];
  }
  if (at >= toks.size()) out += out.empty() ? "[<end>]" : " [<end>]";
  return out;
}

AcceptanceFigures ToFigures(const stages::SpecMetrics& m) {
  AcceptanceFigures f;
  f.rate = m.acceptance_rate;
  f.length = m.acceptance_length;
  f.per_position = m.per_position;
  f.drafts = m.drafts;
  f.counters = m.style == "vllm";
  return f;
}

json RecordLine(const Prompt& p, const std::string& model, const PredictionOptions& o,
                const stages::Completion& c) {
  json messages = json::array();
  for (const auto& m : p.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  return json{{"id", p.id},
              {"messages", messages},
              {"api", o.api},
              {"model", model},
              {"max_tokens", o.max_tokens},
              {"content", c.content},
              {"reasoning", c.reasoning},
              {"completion_tokens", c.usage ? json(c.usage->completion_tokens) : json(nullptr)},
              {"finish_reason", c.finish_reason}};
}

struct Reference {
  std::vector<Prompt> prompts;
  std::vector<Output> outputs;
  std::string model;
  int max_tokens = 0;
  std::string api;
};

Result<Reference> LoadReference(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat("--reference ", path, ": cannot open"));
  Reference ref;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (StripWhitespace(line).empty()) continue;
    json j = json::parse(line, nullptr, false);
    auto bad = [&](const std::string& why) {
      return absl::InvalidArgumentError(StrCat(path, ":", line_no, ": ", why));
    };
    if (!j.is_object() || !j.contains("messages") || !j["messages"].is_array()) {
      return bad("expected a record written by lh-inspect record (with messages)");
    }
    Prompt p{j.value("id", StrCat(line_no)), {}};
    for (const auto& m : j["messages"]) {
      if (!m.is_object()) return bad("a message is not an object");
      p.messages.push_back({m.value("role", ""), m.value("content", "")});
    }
    Output o;
    o.completion.content = j.value("content", "");
    o.completion.reasoning = j.value("reasoning", "");
    o.completion.finish_reason = j.value("finish_reason", "");
    if (j.contains("completion_tokens") && j["completion_tokens"].is_number_integer()) {
      stages::Usage u;
      u.completion_tokens = j["completion_tokens"].get<int64_t>();
      o.completion.usage = u;
    }
    int max_tokens = j.value("max_tokens", 0);
    if (ref.max_tokens != 0 && max_tokens != ref.max_tokens) {
      return bad(
          StrCat("max_tokens ", max_tokens, " differs from earlier lines' ", ref.max_tokens));
    }
    ref.max_tokens = max_tokens;
    ref.model = j.value("model", "");
    ref.api = j.value("api", "chat");
    ref.prompts.push_back(std::move(p));
    ref.outputs.push_back(std::move(o));
  }
  if (ref.prompts.empty()) return absl::InvalidArgumentError(StrCat(path, ": no records"));
  return ref;
}

}  // namespace

Status RecordReference(const PredictionOptions& o, const std::string& out_path, std::ostream& out,
                       EventWriter& events) {
  ASSIGN_OR_RETURN(net::HttpUrl target, ParseUrl("--target", o.target_url));
  ASSIGN_OR_RETURN(stages::OpenAiApi api, stages::ParseOpenAiApi(o.api));
  if (o.num < 1) return absl::InvalidArgumentError("--num must be >= 1");
  if (o.max_tokens < 1) return absl::InvalidArgumentError("--max-tokens must be >= 1");
  if (out_path.empty()) return absl::InvalidArgumentError("--out is required");
  ASSIGN_OR_RETURN(std::vector<Prompt> prompts, LoadPrompts(o.prompts));
  if (prompts.size() > static_cast<size_t>(o.num)) prompts.resize(o.num);
  std::string model = o.model;
  if (model.empty()) {
    ASSIGN_OR_RETURN(model, ServedModel("--target", target));
  }
  std::string text;
  for (size_t i = 0; i < prompts.size(); ++i) {
    Output t = Generate(target, prompts[i], model, o, api);
    if (!t.status.ok()) {
      return Annotate(t.status, StrCat("prompt ", i, " (id ", prompts[i].id, ")"));
    }
    text += RecordLine(prompts[i], model, o, t.completion)
                .dump(-1, ' ', false, json::error_handler_t::replace) +
            "\n";
    events.Progress(static_cast<double>(i + 1), static_cast<double>(prompts.size()), "prompts");
  }
  std::ofstream f(out_path, std::ios::trunc);
  if (!f || !(f << text) || !f.flush()) {
    return absl::InternalError(StrCat("write ", out_path, " failed"));
  }
  std::string abs = std::filesystem::absolute(out_path).lexically_normal().string();
  events.Output("reference", abs);
  events.Artifact("reference", abs, static_cast<int64_t>(text.size()));
  out << "recorded " << prompts.size() << " target outputs (temperature 0, max_tokens "
      << o.max_tokens << ") to " << abs << "\n";
  return OkStatus();
}

TextDiff CompareTokens(const std::string& target, const std::string& spec) {
  TextDiff d;
  std::vector<std::string> a = Tokens(target), b = Tokens(spec);
  size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == n && a.size() == b.size()) return d;
  d.equal = false;
  d.token = i;
  d.target_near = Near(a, i);
  d.spec_near = Near(b, i);
  return d;
}

Status InspectPredictions(const PredictionOptions& o, Report& report, std::ostream& out,
                          EventWriter& events) {
  bool live_target = o.reference.empty();
  if (!live_target && !o.target_url.empty()) {
    return absl::InvalidArgumentError("give --target or --reference, not both");
  }
  net::HttpUrl target;
  if (live_target) {
    ASSIGN_OR_RETURN(target, ParseUrl("--target", o.target_url));
  }
  ASSIGN_OR_RETURN(net::HttpUrl spec, ParseUrl("--spec", o.spec_url));
  if (live_target && target.Origin() == spec.Origin() && target.path == spec.path) {
    return absl::InvalidArgumentError(
        "--target and --spec name the same server; --target must serve the model alone");
  }
  PredictionOptions eff = o;  // a reference fixes the request parameters
  Reference ref;
  if (!live_target) {
    ASSIGN_OR_RETURN(ref, LoadReference(o.reference));
    eff.max_tokens = ref.max_tokens;
    eff.api = ref.api;
    if (eff.model.empty()) eff.model = ref.model;
  }
  ASSIGN_OR_RETURN(stages::OpenAiApi api, stages::ParseOpenAiApi(eff.api));
  ASSIGN_OR_RETURN(stages::MetricsStyle style, stages::ParseMetricsStyle(o.metrics_style));
  if (o.num < 1) return absl::InvalidArgumentError("--num must be >= 1");
  if (eff.max_tokens < 1) return absl::InvalidArgumentError("--max-tokens must be >= 1");
  std::vector<Prompt> prompts;
  if (live_target) {
    ASSIGN_OR_RETURN(prompts, LoadPrompts(o.prompts));
  } else {
    prompts = ref.prompts;
  }
  if (prompts.size() > static_cast<size_t>(o.num)) prompts.resize(o.num);
  std::string target_model = eff.model, spec_model = eff.model;
  if (target_model.empty() && live_target) {
    ASSIGN_OR_RETURN(target_model, ServedModel("--target", target));
  }
  if (spec_model.empty()) {
    ASSIGN_OR_RETURN(spec_model, ServedModel("--spec", spec));
  }

  stages::ServerScrape spec_before = stages::ScrapeServer(spec, style);
  stages::ServerScrape target_before;
  if (live_target) target_before = stages::ScrapeServer(target, stages::MetricsStyle::kVllm);

  json rows = json::array();
  int compared = 0, mismatches = 0, failed = 0;
  std::string first_mismatch, first_failure;
  int64_t target_tokens = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const Prompt& p = prompts[i];
    Output t = live_target ? Generate(target, p, target_model, eff, api) : ref.outputs[i];
    Output s = Generate(spec, p, spec_model, eff, api);
    json row = {{"index", i}, {"id", p.id}};
    if (!t.status.ok() || !s.status.ok()) {
      ++failed;
      std::string why = !t.status.ok() ? StrCat("target: ", t.status.message())
                                       : StrCat("speculative: ", s.status.message());
      row["error"] = why;
      if (first_failure.empty()) first_failure = StrCat("prompt ", i, " (id ", p.id, "): ", why);
      rows.push_back(row);
      events.Progress(static_cast<double>(i + 1), static_cast<double>(prompts.size()), "prompts");
      continue;
    }
    ++compared;
    const auto& tc = t.completion;
    const auto& sc = s.completion;
    if (tc.usage) target_tokens += tc.usage->completion_tokens;
    row["target_tokens"] = tc.usage ? json(tc.usage->completion_tokens) : json(nullptr);
    row["spec_tokens"] = sc.usage ? json(sc.usage->completion_tokens) : json(nullptr);
    // Reasoning first, then the answer: the order in which the tokens were generated.
    std::string where;
    TextDiff diff = CompareTokens(tc.reasoning, sc.reasoning);
    if (!diff.equal) {
      where = StrCat("reasoning token ", diff.token);
    } else {
      diff = CompareTokens(tc.content, sc.content);
      if (!diff.equal) where = StrCat("answer token ", diff.token);
    }
    std::string detail;
    if (!diff.equal) {
      detail =
          StrCat(where, ": target '", diff.target_near, "' vs speculative '", diff.spec_near, "'");
    } else if (tc.usage && sc.usage && tc.usage->completion_tokens != sc.usage->completion_tokens) {
      detail = StrCat("same text but ", tc.usage->completion_tokens, " vs ",
                      sc.usage->completion_tokens, " completion tokens");
    } else if (tc.finish_reason != sc.finish_reason) {
      detail = StrCat("same text but finish_reason '", tc.finish_reason, "' vs '", sc.finish_reason,
                      "'");
    }
    row["equal"] = detail.empty();
    if (!detail.empty()) {
      ++mismatches;
      row["difference"] = detail;
      if (first_mismatch.empty())
        first_mismatch = StrCat("prompt ", i, " (id ", p.id, "), ", detail);
    }
    rows.push_back(row);
    events.Progress(static_cast<double>(i + 1), static_cast<double>(prompts.size()), "prompts");
  }

  stages::ServerScrape spec_after = stages::ScrapeServer(spec, style);
  stages::ServerScrape target_after;
  if (live_target) target_after = stages::ScrapeServer(target, stages::MetricsStyle::kVllm);
  stages::SpecMetrics m = stages::ComputeSpecMetrics(spec_before, spec_after, style);
  stages::SpecMetrics tm =
      stages::ComputeSpecMetrics(target_before, target_after, stages::MetricsStyle::kVllm);
  AcceptanceFigures fig = ToFigures(m);
  auto cond = ConditionalAcceptance(fig, o.rules.min_support);

  json& sec = report.Section(kPredictionsSection);
  sec["target"] = live_target ? json(target.Origin() + target.path) : json(nullptr);
  sec["reference"] = live_target ? json(nullptr) : json(o.reference);
  sec["spec"] = spec.Origin() + spec.path;
  sec["target_model"] = target_model;
  sec["spec_model"] = spec_model;
  sec["prompts_file"] = o.prompts.empty() ? json("(built-in)") : json(o.prompts);
  sec["max_tokens"] = eff.max_tokens;
  sec["prompts_sent"] = prompts.size();
  sec["prompts_compared"] = compared;
  sec["mismatches"] = mismatches;
  sec["failed"] = failed;
  sec["target_completion_tokens"] = target_tokens;
  sec["acceptance"] = stages::SpecMetricsToJson(m);
  json conditional = json::array();
  for (const auto& c : cond) conditional.push_back(c ? json(*c) : json(nullptr));
  sec["acceptance"]["conditional_per_position"] = conditional;
  sec["expected_acceptance"] = o.rules.expected;
  sec["prompts"] = rows;

  report.Metric("prompts_compared", compared);
  report.Metric("output_mismatches", mismatches);
  report.Metric("failed_requests", failed);
  if (m.acceptance_rate) report.Metric("accept_rate", *m.acceptance_rate);
  if (m.acceptance_length) report.Metric("accept_length", *m.acceptance_length);
  for (size_t i = 0; i < m.per_position.size(); ++i) {
    report.Metric(StrCat("accept_rate_pos_", i), m.per_position[i]);
  }

  if (mismatches > 0) {
    report.Add(Severity::kError, kPredictionsSection, "output_mismatch",
               StrCat("integration bug: at temperature 0 the speculative server's output differs "
                      "from the target's for ",
                      mismatches, " of ", compared, " prompts; first: ", first_mismatch));
  }
  if (failed > 0) {
    report.Add(Severity::kWarn, kPredictionsSection, "failed_requests",
               StrCat(failed, " of ", prompts.size(),
                      " prompts could not be compared; first: ", first_failure));
  }
  if (compared == 0) {
    report.Add(Severity::kError, kPredictionsSection, "nothing_compared",
               "no prompt got an answer from both servers");
  }
  if (tm.drafts > 0) {
    report.Add(Severity::kWarn, kPredictionsSection, "target_drafts",
               StrCat("the --target server counted ", static_cast<int64_t>(tm.drafts),
                      " drafts: it runs speculative decoding too, so it is no target-only "
                      "reference"));
  }
  if (!m.acceptance_rate && !m.acceptance_length && !fig.counters) {
    report.Add(Severity::kWarn, kPredictionsSection, "no_acceptance_metrics",
               StrCat("no acceptance figures from the speculative server: ", m.note));
  } else if (compared > 0) {
    CheckAcceptance(fig, o.rules, report);
  }

  out << "predictions: target "
      << (live_target ? StrCat(target.Origin(), " (", target_model, ")")
                      : StrCat("outputs recorded in ", o.reference))
      << ", speculative " << spec.Origin() << " (" << spec_model << ")\n";
  out << "  prompts compared    " << compared << " of " << prompts.size() << " (temperature 0, "
      << "max_tokens " << eff.max_tokens << ", " << target_tokens << " target tokens)\n";
  out << "  outputs identical   " << compared - mismatches << " of " << compared
      << (mismatches > 0 ? "  <- integration bug" : "") << "\n";
  out << "  acceptance          ";
  if (m.acceptance_rate || m.acceptance_length) {
    out << "rate " << (m.acceptance_rate ? Fixed(*m.acceptance_rate) : "-") << ", mean length "
        << (m.acceptance_length ? Fixed(*m.acceptance_length, 2) : "-") << " (" << m.style;
    if (m.style == "vllm") out << " counters, " << static_cast<int64_t>(m.drafts) << " drafts";
    out << ")\n";
  } else {
    out << "unavailable: " << m.note << "\n";
  }
  if (!m.per_position.empty()) {
    out << "  per position        ";
    for (double v : m.per_position) out << Fixed(v) << " ";
    out << "\n  conditional         ";
    for (const auto& c : cond) out << (c ? Fixed(*c) : std::string("  -  ")) << " ";
    out << "\n";
  }
  if (!o.rules.expected.empty()) {
    out << "  expected            ";
    for (double v : o.rules.expected) out << Fixed(v) << " ";
    out << "\n";
  }
  return OkStatus();
}

}  // namespace longhaul::inspect
