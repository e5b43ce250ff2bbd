#include "stages/serve/engine_profile.h"

#include <yaml-cpp/yaml.h>

#include <set>

#include "core/duration.h"
#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::stages {
namespace {

// Reads one profile file; every error carries file:line:col of the node at fault.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  Status Bad(const YAML::Node& n, std::string_view why) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return absl::InvalidArgumentError(StrCat(path_, ": ", why));
    return absl::InvalidArgumentError(StrCat(path_, ":", m.line + 1, ":", m.column + 1, ": ", why));
  }

  Status Keys(const YAML::Node& map, std::string_view what,
              const std::set<std::string>& allowed) const {
    if (!map.IsMap()) return Bad(map, StrCat(what, ": expected a mapping"));
    for (const auto& kv : map) {
      std::string key = kv.first.Scalar();
      if (allowed.count(key) == 0) {
        return Bad(kv.first, StrCat("unknown key '", key, "' in ", what, " (expected ",
                                    StrJoin({allowed.begin(), allowed.end()}, ", "), ")"));
      }
    }
    return OkStatus();
  }

  Result<std::string> Str(const YAML::Node& n, std::string_view what) const {
    if (!n.IsScalar()) return Bad(n, StrCat(what, ": expected a string"));
    return n.Scalar();
  }

  Result<std::vector<std::string>> StrList(const YAML::Node& n, std::string_view what) const {
    if (!n.IsSequence()) return Bad(n, StrCat(what, ": expected a list of strings"));
    std::vector<std::string> out;
    for (size_t i = 0; i < n.size(); ++i) {
      ASSIGN_OR_RETURN(std::string s, Str(n[i], StrCat(what, "[", i, "]")));
      out.push_back(std::move(s));
    }
    return out;
  }

  Result<std::map<std::string, std::string>> StrMap(const YAML::Node& n,
                                                    std::string_view what) const {
    if (!n.IsMap()) return Bad(n, StrCat(what, ": expected a mapping"));
    std::map<std::string, std::string> out;
    for (const auto& kv : n) {
      std::string key = kv.first.Scalar();
      if (kv.second.IsNull()) {
        out[key] = "";
        continue;
      }
      ASSIGN_OR_RETURN(out[key], Str(kv.second, StrCat(what, ".", key)));
    }
    return out;
  }

  Result<int64_t> Duration(const YAML::Node& n, std::string_view what) const {
    ASSIGN_OR_RETURN(std::string s, Str(n, what));
    auto ms = ParseDurationMs(s);
    if (!ms.ok()) return Bad(n, StrCat(what, ": ", ms.status().message()));
    if (*ms <= 0) return Bad(n, StrCat(what, ": must be > 0"));
    return *ms;
  }

  Result<int64_t> Int(const YAML::Node& n, std::string_view what, int64_t min) const {
    ASSIGN_OR_RETURN(std::string s, Str(n, what));
    try {
      size_t used = 0;
      int64_t v = std::stoll(s, &used);
      if (used == s.size() && v >= min) return v;
    } catch (...) {
    }
    return Bad(n, StrCat(what, ": expected an integer >= ", min));
  }

  Result<LogPattern> Pattern(const YAML::Node& n, std::string_view what) const {
    ASSIGN_OR_RETURN(std::string s, Str(n, what));
    try {
      return LogPattern{s, std::regex(s, std::regex::ECMAScript)};
    } catch (const std::regex_error& e) {
      return Bad(n, StrCat(what, ": bad regex '", s, "': ", e.what()));
    }
  }

 private:
  std::string path_;
};

Status ParseInto(const YAML::Node& root, const Reader& r, EngineProfile& p) {
  RETURN_IF_ERROR(r.Keys(root, "the profile",
                         {"name", "description", "argv", "optional", "defaults", "env", "port",
                          "health", "probe", "metrics", "fatal_log_patterns", "fatal_while_serving",
                          "ready_log_line", "timeouts", "version_command"}));
  if (!root["name"]) return r.Bad(root, "missing 'name'");
  ASSIGN_OR_RETURN(p.name, r.Str(root["name"], "name"));
  if (root["description"]) {
    ASSIGN_OR_RETURN(p.description, r.Str(root["description"], "description"));
  }
  if (!root["argv"]) return r.Bad(root, "missing 'argv'");
  ASSIGN_OR_RETURN(p.argv, r.StrList(root["argv"], "argv"));
  if (p.argv.empty()) return r.Bad(root["argv"], "argv: must not be empty");
  if (const YAML::Node vc = root["version_command"]; vc && !vc.IsNull()) {
    ASSIGN_OR_RETURN(p.version_command, r.StrList(vc, "version_command"));
    if (p.version_command.empty()) return r.Bad(vc, "version_command: must not be empty");
  }
  if (const YAML::Node opt = root["optional"]) {
    if (!opt.IsSequence()) return r.Bad(opt, "optional: expected a list of {when, argv}");
    for (size_t i = 0; i < opt.size(); ++i) {
      std::string what = StrCat("optional[", i, "]");
      RETURN_IF_ERROR(r.Keys(opt[i], what, {"when", "argv"}));
      ArgvSection s;
      if (!opt[i]["when"] || !opt[i]["argv"])
        return r.Bad(opt[i], StrCat(what, ": needs 'when' and 'argv'"));
      if (opt[i]["when"].IsSequence()) {
        ASSIGN_OR_RETURN(s.when, r.StrList(opt[i]["when"], StrCat(what, ".when")));
      } else {
        ASSIGN_OR_RETURN(std::string w, r.Str(opt[i]["when"], StrCat(what, ".when")));
        s.when.push_back(w);
      }
      ASSIGN_OR_RETURN(s.argv, r.StrList(opt[i]["argv"], StrCat(what, ".argv")));
      p.optional.push_back(std::move(s));
    }
  }
  if (root["defaults"]) {
    ASSIGN_OR_RETURN(p.defaults, r.StrMap(root["defaults"], "defaults"));
  }
  if (root["env"]) {
    ASSIGN_OR_RETURN(p.env, r.StrMap(root["env"], "env"));
  }
  if (const YAML::Node port = root["port"]) {
    ASSIGN_OR_RETURN(std::string s, r.Str(port, "port"));
    if (s != "auto") {
      ASSIGN_OR_RETURN(int64_t v, r.Int(port, "port ('auto' or a number)", 1));
      if (v > 65535) return r.Bad(port, "port: must be <= 65535");
      p.port = static_cast<int>(v);
    }
  }
  if (const YAML::Node h = root["health"]) {
    RETURN_IF_ERROR(
        r.Keys(h, "health", {"path", "interval", "serving_interval", "serving_failures"}));
    if (h["path"]) {
      ASSIGN_OR_RETURN(p.health_path, r.Str(h["path"], "health.path"));
    }
    if (h["interval"]) {
      ASSIGN_OR_RETURN(p.health_interval_ms, r.Duration(h["interval"], "health.interval"));
    }
    if (h["serving_interval"]) {
      ASSIGN_OR_RETURN(p.serving_health_interval_ms,
                       r.Duration(h["serving_interval"], "health.serving_interval"));
    }
    if (h["serving_failures"]) {
      ASSIGN_OR_RETURN(int64_t n, r.Int(h["serving_failures"], "health.serving_failures", 1));
      p.serving_health_failures = static_cast<int>(n);
    }
  }
  if (const YAML::Node pr = root["probe"]) {
    RETURN_IF_ERROR(r.Keys(pr, "probe", {"api", "model", "prompt", "max_tokens"}));
    if (pr["api"]) {
      ASSIGN_OR_RETURN(std::string api, r.Str(pr["api"], "probe.api"));
      auto parsed = ParseOpenAiApi(api);
      if (!parsed.ok()) return r.Bad(pr["api"], StrCat("probe.", parsed.status().message()));
      p.probe_api = *parsed;
    }
    if (pr["model"]) {
      ASSIGN_OR_RETURN(p.probe_model, r.Str(pr["model"], "probe.model"));
    }
    if (pr["prompt"]) {
      ASSIGN_OR_RETURN(p.probe_prompt, r.Str(pr["prompt"], "probe.prompt"));
    }
    if (pr["max_tokens"]) {
      ASSIGN_OR_RETURN(p.probe_max_tokens, r.Int(pr["max_tokens"], "probe.max_tokens", 1));
    }
  }
  if (const YAML::Node m = root["metrics"]) {
    RETURN_IF_ERROR(r.Keys(m, "metrics", {"path", "style", "names"}));
    if (m["path"]) {
      ASSIGN_OR_RETURN(p.metrics_path, r.Str(m["path"], "metrics.path"));
    }
    if (m["style"]) {
      ASSIGN_OR_RETURN(p.metrics_style, r.Str(m["style"], "metrics.style"));
      if (p.metrics_style != "vllm" && p.metrics_style != "sglang") {
        return r.Bad(m["style"], "metrics.style: expected vllm or sglang");
      }
    }
    if (m["names"]) {
      ASSIGN_OR_RETURN(p.metric_names, r.StrMap(m["names"], "metrics.names"));
    }
  }
  if (const YAML::Node f = root["fatal_log_patterns"]) {
    if (!f.IsSequence()) return r.Bad(f, "fatal_log_patterns: expected a list of regexes");
    for (size_t i = 0; i < f.size(); ++i) {
      ASSIGN_OR_RETURN(LogPattern lp, r.Pattern(f[i], StrCat("fatal_log_patterns[", i, "]")));
      p.fatal_log_patterns.push_back(std::move(lp));
    }
  }
  if (const YAML::Node f = root["fatal_while_serving"]) {
    ASSIGN_OR_RETURN(std::string s, r.Str(f, "fatal_while_serving"));
    if (s != "true" && s != "false") return r.Bad(f, "fatal_while_serving: expected true or false");
    p.fatal_while_serving = s == "true";
  }
  if (const YAML::Node rl = root["ready_log_line"]; rl && !rl.IsNull()) {
    ASSIGN_OR_RETURN(LogPattern lp, r.Pattern(rl, "ready_log_line"));
    if (!lp.text.empty()) p.ready_log_line = std::move(lp);
  }
  if (const YAML::Node t = root["timeouts"]) {
    RETURN_IF_ERROR(r.Keys(t, "timeouts", {"load", "probe", "stop_grace"}));
    if (t["load"]) {
      ASSIGN_OR_RETURN(p.load_timeout_ms, r.Duration(t["load"], "timeouts.load"));
    }
    if (t["probe"]) {
      ASSIGN_OR_RETURN(p.probe_timeout_ms, r.Duration(t["probe"], "timeouts.probe"));
    }
    if (t["stop_grace"]) {
      ASSIGN_OR_RETURN(p.stop_grace_ms, r.Duration(t["stop_grace"], "timeouts.stop_grace"));
    }
  }
  return OkStatus();
}

}  // namespace

Result<EngineProfile> ParseEngineProfile(const std::string& yaml_text, const std::string& path) {
  Reader r(path);
  EngineProfile p;
  p.path = path;
  try {
    YAML::Node root = YAML::Load(yaml_text);
    if (!root.IsMap()) return absl::InvalidArgumentError(StrCat(path, ": expected a mapping"));
    RETURN_IF_ERROR(ParseInto(root, r, p));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        StrCat(path, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
  return p;
}

Result<EngineProfile> LoadEngineProfile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseEngineProfile(text, path);
}

}  // namespace longhaul::stages
