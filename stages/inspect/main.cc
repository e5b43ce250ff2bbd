// lh-inspect: debug a campaign's data and predictions (docs/stages.md, "lh-inspect").
// Flags only; the inspections live in longhaul_stages_inspect.
#include <CLI/CLI.hpp>
#include <iostream>

#include "core/event_writer.h"
#include "core/logging.h"
#include "stages/inspect/inspect_app.h"

namespace {

using namespace longhaul::inspect;

void AddCommon(CLI::App* app, InspectOptions& o) {
  app->add_option("--report", o.report_path,
                  "JSON report path (default inspect_<mode>.json; '-' for none)");
  app->add_option("--fail-on", o.fail_on, "exit 1 when a finding is at this level or above")
      ->check(CLI::IsMember({"warn", "error"}));
}

CLI::Option* AddData(CLI::App* app, DataOptions& d, bool required) {
  auto* s = app->add_option("--samples", d.samples, "conversations JSONL (lh-datagen output)");
  if (required) s->required();
  app->add_option("--failed", d.failed,
                  "lh-datagen's failed samples (default: SAMPLES.failed.jsonl if present)");
  app->add_option("--template-markers", d.template_markers,
                  "comma-separated markers that must not appear in answers (default: common "
                  "chat-template tokens)")
      ->delimiter(',');
  app->add_option("--max-duplicate-fraction", d.max_duplicate_fraction,
                  "duplicate prompts/answers above this fraction are a warning")
      ->capture_default_str();
  return s;
}

CLI::Option* AddPredictions(CLI::App* app, PredictionOptions& p, bool required) {
  auto* t = app->add_option("--target", p.target_url, "target-only server, http://HOST:PORT");
  auto* r = app->add_option("--reference", p.reference,
                            "instead of --target: the target's outputs recorded by "
                            "`lh-inspect record` (prompts and request parameters included)");
  t->excludes(r);
  auto* s = app->add_option("--spec", p.spec_url, "speculative server, http://HOST:PORT");
  if (required) s->required();
  app->add_option("--prompts", p.prompts,
                  "conversations JSONL (default: a few built-in questions)");
  app->add_option("--num", p.num, "prompts to compare")->capture_default_str();
  app->add_option("--max-tokens", p.max_tokens, "max_tokens per request")->capture_default_str();
  app->add_option("--model", p.model, "model name for both servers (default: /v1/models)");
  app->add_option("--api", p.api, "chat | completions")
      ->check(CLI::IsMember({"chat", "completions"}))
      ->capture_default_str();
  app->add_option("--metrics-style", p.metrics_style, "auto | vllm | sglang")
      ->check(CLI::IsMember({"auto", "vllm", "sglang"}))
      ->capture_default_str();
  app->add_option("--request-timeout", p.request_timeout_s, "seconds per request")
      ->capture_default_str();
  app->add_option("--expected-acceptance", p.rules.expected,
                  "acceptance the drafter reached in training: one value (position 0) or one "
                  "per position, comma-separated")
      ->delimiter(',');
  app->add_option("--far-below", p.rules.far_below,
                  "flag acceptance under this fraction of the expected")
      ->capture_default_str();
  app->add_option("--pos0-ratio", p.rules.pos0_ratio,
                  "flag position 0's rate under this fraction of later positions' mean "
                  "conditional rate")
      ->capture_default_str();
  return s;
}

struct DrafterFlags {
  int64_t vocab = 0;
  std::string hash;
  CLI::Option* vocab_opt = nullptr;
  CLI::Option* hash_opt = nullptr;
};

CLI::Option* AddDrafter(CLI::App* app, DrafterOptions& d, DrafterFlags& f, bool required) {
  auto* opt = app->add_option("--drafter", d.drafter, "drafter checkpoint directory");
  if (required) opt->required();
  app->add_option("--target-config", d.target_config,
                  "target facts: HF config.json, lh-extract manifest.json, or a dir with one");
  f.vocab_opt = app->add_option("--target-vocab-size", f.vocab, "the target's vocabulary size");
  f.hash_opt = app->add_option("--target-hash", f.hash, "the target's model hash");
  return opt;
}

void ApplyDrafterFlags(DrafterOptions& d, const DrafterFlags& f) {
  if (f.vocab_opt->count()) d.target_vocab_size = f.vocab;
  if (f.hash_opt->count()) d.target_hash = f.hash;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "lh-inspect: debug a speculative-decoding campaign's data and predictions. Writes a "
      "human-readable report on stdout, a JSON report, and stage events (metrics, one message "
      "per finding) when $LONGHAUL_EVENTS is set. Exit 0 when it ran, whatever it found, "
      "unless --fail-on is given."};
  app.require_subcommand(1);

  InspectOptions data_o, pred_o, drafter_o, all_o;
  data_o.mode = "data";
  pred_o.mode = "predictions";
  drafter_o.mode = "drafter";
  all_o.mode = "all";
  DataOptions data, all_data;
  PredictionOptions pred, all_pred;
  DrafterOptions drafter, all_drafter;
  DrafterFlags drafter_flags, all_drafter_flags;

  auto* data_cmd = app.add_subcommand("data", "check a conversations file (lh-datagen output)");
  AddData(data_cmd, data, true);
  AddCommon(data_cmd, data_o);

  auto* pred_cmd = app.add_subcommand(
      "predictions",
      "compare target-only and speculative outputs at temperature 0; read acceptance");
  AddPredictions(pred_cmd, pred, true);
  AddCommon(pred_cmd, pred_o);

  PredictionOptions record;
  std::string record_out;
  auto* record_cmd = app.add_subcommand(
      "record", "record the target-only server's outputs at temperature 0, for `predictions "
                "--reference` later without serving the target again");
  record_cmd->add_option("--target", record.target_url, "target-only server, http://HOST:PORT")
      ->required();
  record_cmd->add_option("--prompts", record.prompts,
                         "conversations JSONL (default: a few built-in questions)");
  record_cmd->add_option("--num", record.num, "prompts to record")->capture_default_str();
  record_cmd->add_option("--max-tokens", record.max_tokens, "max_tokens per request")
      ->capture_default_str();
  record_cmd->add_option("--model", record.model, "model name (default: /v1/models)");
  record_cmd->add_option("--api", record.api, "chat | completions")
      ->check(CLI::IsMember({"chat", "completions"}))
      ->capture_default_str();
  record_cmd->add_option("--out", record_out, "JSONL file to write")->required();

  auto* drafter_cmd = app.add_subcommand(
      "drafter", "check a drafter's config and vocab mappings against its target");
  AddDrafter(drafter_cmd, drafter, drafter_flags, true);
  AddCommon(drafter_cmd, drafter_o);

  auto* all_cmd = app.add_subcommand("all", "every inspection whose inputs are given, one report");
  auto* all_samples = AddData(all_cmd, all_data, false);
  auto* all_target = AddPredictions(all_cmd, all_pred, false);
  auto* all_drafter_opt = AddDrafter(all_cmd, all_drafter, all_drafter_flags, false);
  AddCommon(all_cmd, all_o);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit with 2, as the other stages do; --help with 0.
    return app.exit(e) == 0 ? 0 : 2;
  }
  longhaul::SetupLogging("warn");

  if (*record_cmd) {
    longhaul::EventWriter events = longhaul::EventWriter::FromEnv();
    longhaul::Status st = RecordReference(record, record_out, std::cout, events);
    if (!st.ok()) {
      std::cerr << "lh-inspect record: " << st.message() << "\n";
      return absl::IsInvalidArgument(st) || absl::IsNotFound(st) ? 2 : 1;
    }
    return 0;
  }
  InspectOptions* o = nullptr;
  if (*data_cmd) {
    o = &data_o;
    o->data = data;
  } else if (*pred_cmd) {
    o = &pred_o;
    o->predictions = pred;
  } else if (*drafter_cmd) {
    o = &drafter_o;
    ApplyDrafterFlags(drafter, drafter_flags);
    o->drafter = drafter;
  } else {
    o = &all_o;
    if (all_samples->count()) o->data = all_data;
    if (all_target->count()) o->predictions = all_pred;
    if (all_drafter_opt->count()) {
      ApplyDrafterFlags(all_drafter, all_drafter_flags);
      o->drafter = all_drafter;
    }
  }
  longhaul::EventWriter events = longhaul::EventWriter::FromEnv();
  return RunInspect(*o, events, std::cout, std::cerr);
}
