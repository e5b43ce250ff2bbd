#include "daemon/workflow/stage_parser.h"

#include <cctype>
#include <climits>

#include "core/strings.h"
#include "daemon/workflow/template.h"

namespace longhaul::workflow {
namespace {

const std::vector<std::string> kStageKeys = {
    "run",           "needs",         "env",         "resources",     "retry",    "timeout",
    "stall_timeout", "ready_timeout", "grace",       "kind",          "resume",   "cache",
    "cache_version", "description",   "foreach",     "node_selector", "gpu_idle", "on_gpu_idle",
    "preflight",     "early_stop",    "preemptible", "preempt_notice"};
const std::vector<std::string> kDefaultsKeys = {
    "retry",     "timeout",     "stall_timeout", "ready_timeout", "grace",
    "resources", "env",         "node_selector", "gpu_idle",      "on_gpu_idle",
    "preflight", "preemptible", "preempt_notice"};
const std::vector<std::string> kRetryKeys = {"limit",       "infra_limit", "backoff",
                                             "max_backoff", "on",          "exit_codes"};
const std::vector<std::string> kResourceKeys = {"cpus", "memory", "gpus"};
const std::vector<std::string> kCacheOptionKeys = {"key_on"};

// `cache: {key_on: [engine_version, executable]}` (docs/caching.md, "key_on").
void ParseCacheOptions(const MapEntry& e, const std::string& what, StageSpec* spec,
                       Diagnostics& diag) {
  for (const MapEntry& f : ReadMap(e.value, what, "key", &kCacheOptionKeys, diag)) {
    std::string key_what = StrCat("cache.", f.key, " in ", what.substr(what.find(" in ") + 4));
    std::optional<std::vector<Scalar>> names = ReadScalarList(f, key_what, diag);
    if (!names) continue;
    std::vector<std::string> known(std::begin(kKeyOnNames), std::end(kKeyOnNames));
    for (const Scalar& n : *names) {
      if (n.text == kKeyOnNames[0]) {
        spec->cache_key_on |= kKeyOnEngineVersion;
      } else if (n.text == kKeyOnNames[1]) {
        spec->cache_key_on |= kKeyOnExecutable;
      } else {
        diag.Add(n.pos, StrCat(key_what, ": unknown name '", n.text, "' (expected one of ",
                               StrJoin(known, ", "), ")", DidYouMean(n.text, known)));
      }
    }
  }
}

bool IsEnvName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

void ParseRetry(const MapEntry& e, std::string_view where, OverridableFields& out,
                Diagnostics& diag) {
  std::string ctx = StrCat("retry in ", where);
  if (!ExpectMap(e, ctx, diag)) return;
  for (const MapEntry& f : ReadMap(e.value, ctx, "key", &kRetryKeys, diag)) {
    std::string what = StrCat("retry.", f.key, " in ", where);
    if (f.key == "limit") {
      if (auto v = ReadInt(f, what, 0, 1000, diag)) out.retry_limit = static_cast<int>(*v);
    } else if (f.key == "infra_limit") {
      if (auto v = ReadInt(f, what, 0, 1000, diag)) out.retry_infra_limit = static_cast<int>(*v);
    } else if (f.key == "backoff") {
      out.retry_backoff_ms = ReadDuration(f, what, /*allow_zero=*/true, diag);
    } else if (f.key == "max_backoff") {
      out.retry_max_backoff_ms = ReadDuration(f, what, /*allow_zero=*/true, diag);
    } else if (f.key == "on") {
      std::optional<std::vector<Scalar>> kinds = ReadScalarList(f, what, diag);
      if (!kinds) continue;
      std::vector<std::string> known(std::begin(kFailureKinds), std::end(kFailureKinds));
      FailureKinds on;
      bool ok = true;
      for (const Scalar& k : *kinds) {
        if (!on.insert(k.text)) {
          diag.Add(k.pos, StrCat(what, ": unknown failure kind '", k.text, "' (expected one of ",
                                 StrJoin(known, ", "), ")", DidYouMean(k.text, known)));
          ok = false;
        }
      }
      if (ok) out.retry_on = on;
    } else if (f.key == "exit_codes") {
      if (!ExpectList(f, what, diag)) continue;
      std::vector<int> codes;
      bool ok = true;
      for (size_t i = 0; i < f.value.size(); ++i) {
        YamlNode item = f.value[i];
        auto code = ReadInt(item, item.IsNull() ? f.value_pos : PosOf(item), ElementName(what, i),
                            0, 255, diag);
        if (code) codes.push_back(static_cast<int>(*code));
        ok = ok && code.has_value();
      }
      if (ok) out.retry_exit_codes = std::move(codes);
    }
  }
}

void ParseResources(const MapEntry& e, std::string_view where, OverridableFields& out,
                    Diagnostics& diag) {
  std::string ctx = StrCat("resources in ", where);
  if (!ExpectMap(e, ctx, diag)) return;
  for (const MapEntry& f : ReadMap(e.value, ctx, "key", &kResourceKeys, diag)) {
    std::string what = StrCat("resources.", f.key, " in ", where);
    if (f.key == "cpus") {
      out.cpus = ReadPositiveNumber(f, what, diag);
    } else if (f.key == "memory") {
      out.memory_bytes = ReadByteSize(f, what, diag);
    } else if (f.key == "gpus") {
      if (auto v = ReadInt(f, what, 0, 1024, diag)) out.gpus = static_cast<int>(*v);
    }
  }
}

void ParseEnv(const MapEntry& e, std::string_view where, OverridableFields& out,
              Diagnostics& diag) {
  std::string ctx = StrCat("env in ", where);
  if (!ExpectMap(e, ctx, diag)) return;
  for (const MapEntry& f : ReadMap(e.value, ctx, "env var", nullptr, diag)) {
    if (!IsEnvName(f.key)) {
      diag.Add(f.key_pos, StrCat("env in ", where, ": '", f.key,
                                 "' is not a variable name (letters, digits and _)"));
      continue;
    }
    if (StartsWith(f.key, "LONGHAUL_")) {
      diag.Add(f.key_pos, StrCat("env in ", where, ": '", f.key,
                                 "' is set by longhaul (LONGHAUL_* names are reserved)"));
      continue;
    }
    if (auto v = ReadScalar(f, StrCat("env ", f.key, " in ", where), diag)) out.env[f.key] = *v;
  }
}

// A label key as `longhaul-agent --label` takes it: letters, digits, '_', '-', '.', '/'.
bool IsLabelKey(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
          c == '/')) {
      return false;
    }
  }
  return true;
}

// `node_selector: {gpu: h200}`: a mapping of label keys to scalar values.
void ParseNodeSelector(const MapEntry& e, std::string_view where, OverridableFields& out,
                       Diagnostics& diag) {
  std::string ctx = StrCat("node_selector in ", where);
  if (!ExpectMap(e, ctx, diag)) return;
  std::map<std::string, std::string> labels;
  bool ok = true;
  for (const MapEntry& f : ReadMap(e.value, ctx, "label", nullptr, diag)) {
    if (!IsLabelKey(f.key)) {
      diag.Add(f.key_pos,
               StrCat(ctx, ": '", f.key, "' is not a label key (letters, digits, _ - . /)"));
      ok = false;
      continue;
    }
    std::optional<Scalar> v = ReadScalar(f, StrCat("node_selector.", f.key, " in ", where), diag);
    if (!v) {
      ok = false;
      continue;
    }
    labels[f.key] = v->text;
  }
  if (ok) out.node_selector = NodeSelector(labels.begin(), labels.end());
}

// Handles a key that `defaults` and stages share; false if `f` is not one of them.
bool ParseOverridable(const MapEntry& f, std::string_view where, OverridableFields& out,
                      Diagnostics& diag) {
  std::string what = StrCat(f.key, " in ", where);
  if (f.key == "retry") {
    ParseRetry(f, where, out, diag);
  } else if (f.key == "resources") {
    ParseResources(f, where, out, diag);
  } else if (f.key == "env") {
    ParseEnv(f, where, out, diag);
  } else if (f.key == "node_selector") {
    ParseNodeSelector(f, where, out, diag);
  } else if (f.key == "timeout") {
    out.timeout_ms = ReadDuration(f, what, /*allow_zero=*/false, diag);
  } else if (f.key == "stall_timeout") {
    out.stall_timeout_ms = ReadDuration(f, what, /*allow_zero=*/false, diag);
  } else if (f.key == "ready_timeout") {
    out.ready_timeout_ms = ReadDuration(f, what, /*allow_zero=*/false, diag);
    out.ready_timeout_pos = f.key_pos;
  } else if (f.key == "grace") {
    out.grace_ms = ReadDuration(f, what, /*allow_zero=*/true, diag);
  } else if (f.key == "gpu_idle") {
    out.gpu_idle_ms = ReadDuration(f, what, /*allow_zero=*/true, diag);
  } else if (f.key == "preflight") {
    out.preflight = ReadBool(f, what, diag);
    out.preflight_pos = f.key_pos;
  } else if (f.key == "preemptible") {
    out.preemptible = ReadBool(f, what, diag);
  } else if (f.key == "preempt_notice") {
    out.preempt_notice_ms = ReadDuration(f, what, /*allow_zero=*/false, diag);
  } else if (f.key == "on_gpu_idle") {
    if (auto v = ReadScalar(f, what, diag)) {
      if (v->text == "notify" || v->text == "fail") {
        out.gpu_idle_fail = v->text == "fail";
      } else {
        diag.Add(f.value_pos, StrCat(what, ": expected notify or fail, got '", v->text, "'"));
      }
    }
  } else {
    return false;
  }
  return true;
}

template <typename T>
T Pick(const std::optional<T>& own, const std::optional<T>& fallback, T builtin) {
  if (own) return *own;
  if (fallback) return *fallback;
  return builtin;
}

template <typename T>
std::optional<T> PickOpt(const std::optional<T>& own, const std::optional<T>& fallback) {
  return own ? own : fallback;
}

}  // namespace

OverridableFields ParseDefaults(const MapEntry& defaults, Diagnostics& diag) {
  OverridableFields out;
  if (!ExpectMap(defaults, "defaults", diag)) return out;
  for (const MapEntry& f : ReadMap(defaults.value, "defaults", "key", &kDefaultsKeys, diag)) {
    ParseOverridable(f, "defaults", out, diag);
  }
  return out;
}

ParsedStage ParseStage(const MapEntry& entry, StageSpec* spec, Diagnostics& diag) {
  std::string where = StrCat("stage '", entry.key, "'");
  ParsedStage stage;
  stage.spec = spec;
  stage.spec->name = entry.key;
  stage.spec->pos = entry.key_pos;
  if (!entry.value.IsMap()) {
    diag.Add(entry.value_pos, StrCat(where,
                                     ": expected a mapping of stage keys (run, needs, ...)"
                                     ", got ",
                                     Describe(entry.value)));
    return stage;
  }
  bool has_run = false;
  for (const MapEntry& f : ReadMap(entry.value, where, "key", &kStageKeys, diag)) {
    if (ParseOverridable(f, where, stage.fields, diag)) continue;
    std::string what = StrCat(f.key, " in ", where);
    if (f.key == "run") {
      has_run = true;
      if (f.value.IsScalar()) {
        diag.Add(f.value_pos, StrCat(what,
                                     ": run must be a list (argv), not a shell string; "
                                     "write [prog, arg1, arg2]"));
        continue;
      }
      std::optional<std::vector<Scalar>> argv = ReadScalarList(f, what, diag);
      if (!argv) continue;
      if (argv->empty()) {
        diag.Add(f.value_pos, StrCat(what, ": expected a non-empty list (argv)"));
        continue;
      }
      if (StripWhitespace((*argv)[0].text).empty()) {
        diag.Add((*argv)[0].pos, StrCat(what, ": the program (run[0]) is empty"));
        continue;
      }
      stage.run = std::move(*argv);
    } else if (f.key == "needs") {
      if (auto needs = ReadScalarList(f, what, diag)) stage.needs = std::move(*needs);
    } else if (f.key == "kind") {
      auto kind = ReadScalar(f, what, diag);
      if (!kind) continue;
      if (kind->text == "task") {
        stage.spec->kind = StageKind::kTask;
      } else if (kind->text == "service") {
        stage.spec->kind = StageKind::kService;
      } else {
        diag.Add(f.value_pos, StrCat(what, ": expected task or service, got '", kind->text, "'"));
      }
    } else if (f.key == "resume") {
      if (auto v = ReadBool(f, what, diag)) stage.spec->resume = *v;
    } else if (f.key == "cache") {
      if (f.value.IsMap()) {
        ParseCacheOptions(f, what, stage.spec, diag);
      } else if (auto v = ReadBool(f, what, diag)) {
        stage.spec->cache = *v;
      }
    } else if (f.key == "cache_version") {
      if (auto v = ReadScalar(f, what, diag)) stage.spec->cache_version = v->text;
    } else if (f.key == "description") {
      if (auto v = ReadScalar(f, what, diag)) stage.spec->description = v->text;
    }  // "foreach" and "early_stop" are read by the caller (foreach.h, early_stop_parser.h)
  }
  if (!has_run) diag.Add(entry.key_pos, StrCat(where, ": missing required key 'run'"));
  if (stage.fields.ready_timeout_ms && stage.spec->kind != StageKind::kService) {
    diag.Add(stage.fields.ready_timeout_pos,
             StrCat("ready_timeout in ", where, ": only a service stage (kind: service) has one"));
  }
  if (stage.fields.preflight.value_or(false) && stage.fields.gpus && *stage.fields.gpus == 0) {
    diag.Add(stage.fields.preflight_pos, StrCat("preflight in ", where,
                                                ": the pre-flight checks the stage's GPUs, and it "
                                                "asks for none (resources.gpus: 0)"));
  }
  for (const Scalar& s : stage.run) stage.spec->run.push_back(s.text);
  for (const Scalar& s : stage.needs) stage.spec->needs.push_back(s.text);
  return stage;
}

std::vector<TemplateSite> ApplyDefaults(const OverridableFields& d, ParsedStage& stage) {
  const OverridableFields& own = stage.fields;
  StageSpec& spec = *stage.spec;
  static const RetryPolicy builtin_retry;
  static const int64_t builtin_grace_ms = StageSpec{}.grace_ms;
  spec.retry.limit = Pick(own.retry_limit, d.retry_limit, builtin_retry.limit);
  spec.retry.infra_limit =
      Pick(own.retry_infra_limit, d.retry_infra_limit, builtin_retry.infra_limit);
  spec.retry.backoff_ms = Pick(own.retry_backoff_ms, d.retry_backoff_ms, builtin_retry.backoff_ms);
  spec.retry.max_backoff_ms =
      Pick(own.retry_max_backoff_ms, d.retry_max_backoff_ms, builtin_retry.max_backoff_ms);
  spec.retry.on = Pick(own.retry_on, d.retry_on, builtin_retry.on);
  spec.retry.exit_codes = Pick(own.retry_exit_codes, d.retry_exit_codes, builtin_retry.exit_codes);

  ResourceRequest builtin_resources;
  spec.resources.cpus = Pick(own.cpus, d.cpus, builtin_resources.cpus);
  spec.resources.memory_bytes =
      Pick(own.memory_bytes, d.memory_bytes, builtin_resources.memory_bytes);
  spec.resources.gpus = Pick(own.gpus, d.gpus, builtin_resources.gpus);

  spec.node_selector = Pick(own.node_selector, d.node_selector, NodeSelector());
  spec.timeout_ms = PickOpt(own.timeout_ms, d.timeout_ms);
  spec.stall_timeout_ms = PickOpt(own.stall_timeout_ms, d.stall_timeout_ms);
  // A default ready_timeout is meant for the services among the stages; tasks ignore it.
  if (spec.kind == StageKind::kService) {
    spec.ready_timeout_ms = PickOpt(own.ready_timeout_ms, d.ready_timeout_ms);
  }
  spec.grace_ms = Pick(own.grace_ms, d.grace_ms, builtin_grace_ms);
  spec.gpu_idle_ms = PickOpt(own.gpu_idle_ms, d.gpu_idle_ms);
  spec.gpu_idle_fail = Pick(own.gpu_idle_fail, d.gpu_idle_fail, false);
  // A pre-flight checks the stage's GPUs: a default one applies to the stages that hold GPUs.
  spec.preflight = spec.resources.gpus > 0 && Pick(own.preflight, d.preflight, false);
  spec.preemptible = Pick(own.preemptible, d.preemptible, true);
  spec.preempt_notice_ms = PickOpt(own.preempt_notice_ms, d.preempt_notice_ms);

  std::map<std::string, Scalar> merged_env;
  const std::map<std::string, Scalar>* env = &own.env;  // no copy in the usual case
  if (!d.env.empty()) {
    merged_env = d.env;
    for (const auto& [name, value] : own.env) merged_env[name] = value;
    env = &merged_env;
  }

  std::vector<TemplateSite> sites;
  for (size_t i = 0; i < stage.run.size(); ++i) {
    sites.push_back(TemplateSite{stage.run[i], StrCat("run[", i, "]")});
  }
  spec.env.clear();
  for (const auto& [name, value] : *env) {
    spec.env[name] = value.text;
    sites.push_back(TemplateSite{value, StrCat("env ", name)});
  }
  return sites;
}

}  // namespace longhaul::workflow
