// `lh-inspect predictions`: the lossless check and the acceptance read-out of a speculative
// server (docs/engines.md, "The EAGLE-3 pipeline").
//
// The same prompts go at temperature 0 to a target-only server and to the speculative server,
// one at a time. A correct speculative server returns exactly the target's tokens, so any
// difference is an integration bug, whatever the acceptance: the first differing prompt and
// token position are reported. Acceptance (overall, mean length, per position) comes from the
// speculative server's /metrics deltas over the run (vLLM counters; SGLang gauges as a
// fallback), judged by acceptance_checks.h.
//
// Errors of the run (not findings): bad URLs, an unreadable prompts file, a server that cannot
// be reached at all. Failed requests are findings.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/event_writer.h"
#include "core/status.h"
#include "stages/inspect/acceptance_checks.h"
#include "stages/inspect/report.h"

namespace longhaul::inspect {

struct PredictionOptions {
  std::string target_url;  // the target alone
  // Instead of target_url: the target's outputs recorded earlier by RecordReference (its
  // prompts, request parameters and answers), so the target need not be served again.
  std::string reference;
  std::string spec_url;    // target + drafter
  std::string prompts;     // conversations JSONL; "" uses a few built-in questions
  int num = 20;            // prompts to send (the first N of the file)
  int max_tokens = 128;
  std::string model;  // "" asks each server's /v1/models
  std::string api = "chat";
  std::string metrics_style = "auto";  // auto | vllm | sglang
  double request_timeout_s = 600;
  AcceptanceRules rules;
};

// Adds section "predictions", metrics and findings to `report`; a summary to `out`; progress
// events (prompts) to `events`.
Status InspectPredictions(const PredictionOptions& options, Report& report, std::ostream& out,
                          EventWriter& events);

// `lh-inspect record`: sends the prompts (o.prompts, first o.num) to the target-only server
// (o.target_url) at temperature 0 and writes one JSON line per prompt to `out_path`: id,
// messages, api, model, max_tokens, and the answer (content, reasoning, completion_tokens,
// finish_reason). Reports the output `reference` (the absolute path) and an artifact.
Status RecordReference(const PredictionOptions& o, const std::string& out_path,
                       std::ostream& out, EventWriter& events);

// Where two outputs first differ, token by token (whitespace-separated tokens).
struct TextDiff {
  bool equal = true;
  size_t token = 0;         // index of the first differing token
  std::string target_near;  // a few tokens around it, the differing one in [brackets]
  std::string spec_near;
};
TextDiff CompareTokens(const std::string& target, const std::string& spec);

}  // namespace longhaul::inspect
