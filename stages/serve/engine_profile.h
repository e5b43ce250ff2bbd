// Engine profiles: how lh-serve launches and reads an inference engine, as data
// (workflows/engines/NAME.yaml, docs/engine-profiles.md), so following an engine's next
// release or adding an engine needs no rebuild.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/status.h"
#include "stages/common/openai.h"

namespace longhaul::stages {

// argv elements added only when every variable named in `when` is set (non-empty).
struct ArgvSection {
  std::vector<std::string> when;
  std::vector<std::string> argv;
};

struct LogPattern {
  std::string text;  // as written, for messages
  std::regex regex;
};

struct EngineProfile {
  std::string name;
  std::string description;
  std::string path;  // the file it came from

  // Templates: "${var}" anywhere in an element; an element that is exactly "${var...}"
  // expands to the variable split like a shell would (quotes kept together), or to nothing.
  std::vector<std::string> argv;
  std::vector<ArgvSection> optional;
  // Prints the engine's version on its first line of stdout (no templates; the program is
  // searched on the stage's PATH). Run by the agent, once per profile, to record with each
  // attempt (docs/engine-profiles.md, "Engine versions"). Empty: not recorded.
  std::vector<std::string> version_command;
  std::map<std::string, std::string> defaults;  // every variable a user may --set
  std::map<std::string, std::string> env;       // values are templates too

  std::optional<int> port;  // fixed port; unset: pick a free one ("auto")
  std::string health_path = "/health";
  int64_t health_interval_ms = 1000;          // while loading
  int64_t serving_health_interval_ms = 5000;  // once ready
  int serving_health_failures = 3;            // consecutive failures that end serving

  OpenAiApi probe_api = OpenAiApi::kCompletions;
  std::string probe_model = "${model}";  // the served model name, a template
  std::string probe_prompt = "Hello";
  int64_t probe_max_tokens = 1;

  std::string metrics_path = "/metrics";
  std::string metrics_style;                        // "vllm", "sglang", "" (none)
  std::map<std::string, std::string> metric_names;  // role -> metric name, for readers

  std::vector<LogPattern> fatal_log_patterns;
  bool fatal_while_serving = false;          // patterns apply during load only unless set
  std::optional<LogPattern> ready_log_line;  // health is not trusted before this line

  int64_t load_timeout_ms = 40 * 60 * 1000;  // start -> healthy
  int64_t probe_timeout_ms = 120 * 1000;     // healthy -> one generated token
  int64_t stop_grace_ms = 30 * 1000;         // SIGTERM -> SIGKILL of the engine's group
};

// Parses a profile. Errors name the file, line and column: "vllm.yaml:12:3: unknown key
// 'helth' (expected ...)" or "vllm.yaml:20:5: fatal_log_patterns[2]: bad regex ...".
Result<EngineProfile> LoadEngineProfile(const std::string& path);
Result<EngineProfile> ParseEngineProfile(const std::string& yaml_text, const std::string& path);

}  // namespace longhaul::stages
