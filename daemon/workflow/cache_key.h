// Cache keys (docs/caching.md). A stage's key hashes what decides its result:
// its definition as written, the values of the params its templates use, the values its tag
// references resolved to at submission, and the keys of the stages it needs. Runtime bindings
// (upstream outputs, ${output_dir}, ${run.id}) and resources are not part of it, so a re-run
// elsewhere or with other resources still matches.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::workflow {

// The part of a stage's definition that its key covers, as written in the workflow file.
struct StageDefinition {
  std::string kind;                        // "task" or "service"
  std::vector<std::string> run;            // argv templates, before substitution
  std::map<std::string, std::string> env;  // env templates, before substitution
  std::string cache_version;

  bool operator==(const StageDefinition&) const = default;
};

struct StageFingerprint {
  // What definition_hash hashes. Absent only in fingerprints stored before it was recorded.
  std::optional<StageDefinition> definition;
  std::string definition_hash;  // kind, run and env templates as written, cache_version
  std::map<std::string, std::string> params;    // params the stage's templates use -> value
  std::map<std::string, std::string> upstream;  // each stage in `needs` -> its cache key
  // Tag references its templates use (TagRefKey: "TAG.outputs.NAME", "TAG.run") -> the value
  // the submission resolved. Empty for a stage that uses none, and then not hashed, so keys
  // made before tags existed still match.
  std::map<std::string, std::string> tags;
  // Each tag it uses -> where the tag pointed ("run 41 train"), for the plan's reasons. Not
  // part of the key: the values are what the stage sees.
  std::map<std::string, std::string> tag_sources;
  std::string key;  // hash of definition_hash, params, upstream and tags (core/hash.h FieldHasher)

  bool operator==(const StageFingerprint&) const = default;
};

// What a submission resolved the workflow's tag references to (scheduler's tag_resolve.h).
struct TagBindings {
  std::map<std::string, std::string> values;   // TagRefKey -> value
  std::map<std::string, std::string> sources;  // tag -> "run 41 train"
};

// `params` holds the run's resolved params (ResolveParams); a param the stage uses but
// `params` lacks counts as "". `upstream_keys` maps stage names to their keys; a needed
// stage missing from it counts as "" (so the key differs from any real one). `tags` (may be
// null when the workflow uses none) gives the tag references' values; one missing counts as "".
StageFingerprint FingerprintStage(const StageSpec& stage,
                                  const std::map<std::string, std::string>& params,
                                  const std::map<std::string, std::string>& upstream_keys,
                                  const TagBindings* tags = nullptr);

// Human reasons why `now` differs from `before`, e.g. "param spec_engine changed (vllm ->
// sglang)", "definition changed", "upstream 'finetune' changed", "tag best-drafter moved (run
// 41 train -> run 45 train)"; empty when keys are equal.
std::vector<std::string> ExplainDifference(const StageFingerprint& before,
                                           const StageFingerprint& now);

// {"key": "...", "definition_hash": "...", "definition": {"kind": "task", "run": [...],
//  "env": {...}, "cache_version": ""}, "params": {...}, "upstream": {...}}, and "tags" and
// "tag_sources" only for a stage that uses tags.
nlohmann::json FingerprintToJson(const StageFingerprint& fp);
// FingerprintToJson(fp).dump(), byte for byte, written straight to text: what a stage row
// stores, without a JSON tree per stage (a 100,000-stage submission writes 100,000).
std::string FingerprintJsonText(const StageFingerprint& fp);
// InvalidArgument when a field is missing or of the wrong type, DataLoss when the stored key
// (or definition_hash) does not match the stored fields. "definition" may be absent.
Result<StageFingerprint> FingerprintFromJson(const nlohmann::json& json);
Result<StageFingerprint> ParseFingerprintJson(std::string_view text);

}  // namespace longhaul::workflow
