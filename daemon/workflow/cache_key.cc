#include "daemon/workflow/cache_key.h"

#include <set>

#include "core/hash.h"
#include "core/json_string.h"
#include "core/strings.h"
#include "daemon/workflow/template.h"

namespace longhaul::workflow {
namespace {

// Bump when what goes into a key changes, so old keys stop matching instead of colliding.
constexpr std::string_view kDefinitionVersion = "longhaul.stage.definition.v1";
constexpr std::string_view kKeyVersion = "longhaul.stage.key.v1";

void AddMap(FieldHasher& h, std::string_view label, const std::map<std::string, std::string>& m) {
  h.Add(label);
  h.Add(std::to_string(m.size()));
  for (const auto& [k, v] : m) {
    h.Add(k);
    h.Add(v);
  }
}

std::string KeyOf(const StageFingerprint& fp) {
  FieldHasher h;
  h.Add(kKeyVersion);
  h.Add(fp.definition_hash);
  AddMap(h, "params", fp.params);
  AddMap(h, "upstream", fp.upstream);
  if (!fp.tags.empty()) AddMap(h, "tags", fp.tags);
  return h.HexDigest();
}

std::string DefinitionHash(const StageDefinition& d) {
  FieldHasher def;
  def.Add(kDefinitionVersion);
  def.Add(d.kind);
  def.Add("run");
  def.Add(std::to_string(d.run.size()));
  for (const std::string& arg : d.run) def.Add(arg);
  AddMap(def, "env", d.env);
  def.Add("cache_version");
  def.Add(d.cache_version);
  return def.HexDigest();
}

// The params and the tag references (TagRefKey) a template uses.
void CollectParams(std::string_view tmpl, std::set<std::string>& out,
                   std::set<std::string>& tag_keys) {
  if (tmpl.find("${") == std::string_view::npos) return;  // no reference of any kind
  Result<std::vector<TemplateRef>> refs = ParseTemplate(tmpl);
  // ParseWorkflow has rejected malformed templates; anything else is hashed as written.
  if (!refs.ok()) return;
  for (const TemplateRef& r : *refs) {
    if (r.kind == TemplateRef::kParam) out.insert(r.name);
    if (r.kind == TemplateRef::kTagOutput || r.kind == TemplateRef::kTagRun) {
      tag_keys.insert(TagRefKey(r));
    }
  }
}

// "best-drafter" of "best-drafter.outputs.drafter".
std::string TagOfKey(const std::string& key) { return key.substr(0, key.find('.')); }

Status ReadStringMap(const nlohmann::json& json, const char* field,
                     std::map<std::string, std::string>& out) {
  auto it = json.find(field);
  if (it == json.end() || !it->is_object()) {
    return absl::InvalidArgumentError(
        StrCat("fingerprint: '", field, "' is missing or not an object"));
  }
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) {
      return absl::InvalidArgumentError(StrCat("fingerprint: ", field, ".", k, " is not a string"));
    }
    out[k] = v.get<std::string>();
  }
  return OkStatus();
}

Status ReadString(const nlohmann::json& json, const char* field, std::string& out) {
  auto it = json.find(field);
  if (it == json.end() || !it->is_string()) {
    return absl::InvalidArgumentError(
        StrCat("fingerprint: '", field, "' is missing or not a string"));
  }
  out = it->get<std::string>();
  return OkStatus();
}

Result<StageDefinition> ReadDefinition(const nlohmann::json& json) {
  if (!json.is_object())
    return absl::InvalidArgumentError("fingerprint: 'definition' is not an object");
  StageDefinition def;
  RETURN_IF_ERROR(ReadString(json, "kind", def.kind));
  RETURN_IF_ERROR(ReadString(json, "cache_version", def.cache_version));
  RETURN_IF_ERROR(ReadStringMap(json, "env", def.env));
  auto run = json.find("run");
  if (run == json.end() || !run->is_array()) {
    return absl::InvalidArgumentError("fingerprint: 'run' is missing or not an array");
  }
  for (const auto& arg : *run) {
    if (!arg.is_string()) return absl::InvalidArgumentError("fingerprint: run holds a non-string");
    def.run.push_back(arg.get<std::string>());
  }
  return def;
}

}  // namespace

StageFingerprint FingerprintStage(const StageSpec& stage,
                                  const std::map<std::string, std::string>& params,
                                  const std::map<std::string, std::string>& upstream_keys,
                                  const TagBindings* tags) {
  StageFingerprint fp;
  fp.definition = StageDefinition{stage.kind == StageKind::kService ? "service" : "task", stage.run,
                                  stage.env, stage.cache_version.str()};
  fp.definition_hash = DefinitionHash(*fp.definition);

  std::set<std::string> used;
  std::set<std::string> tag_keys;
  for (const std::string& arg : stage.run) CollectParams(arg, used, tag_keys);
  for (const auto& [name, value] : stage.env) CollectParams(value, used, tag_keys);
  for (const std::string& name : used) {
    auto it = params.find(name);
    fp.params[name] = it == params.end() ? "" : it->second;
  }
  for (const std::string& key : tag_keys) {
    std::string value, source;
    if (tags) {
      if (auto it = tags->values.find(key); it != tags->values.end()) value = it->second;
      if (auto it = tags->sources.find(TagOfKey(key)); it != tags->sources.end()) {
        source = it->second;
      }
    }
    fp.tags[key] = value;
    fp.tag_sources[TagOfKey(key)] = source;
  }
  for (const std::string& need : stage.needs) {
    auto it = upstream_keys.find(need);
    fp.upstream[need] = it == upstream_keys.end() ? "" : it->second;
  }
  fp.key = KeyOf(fp);
  return fp;
}

std::vector<std::string> ExplainDifference(const StageFingerprint& before,
                                           const StageFingerprint& now) {
  std::vector<std::string> reasons;
  if (before.key == now.key) return reasons;
  if (before.definition_hash != now.definition_hash) reasons.push_back("definition changed");
  for (const auto& [name, value] : now.params) {
    auto old = before.params.find(name);
    if (old == before.params.end()) {
      reasons.push_back(StrCat("now uses param ", name, " (", value, ")"));
    } else if (old->second != value) {
      reasons.push_back(StrCat("param ", name, " changed (", old->second, " -> ", value, ")"));
    }
  }
  for (const auto& [name, value] : before.params) {
    if (!now.params.count(name)) reasons.push_back(StrCat("no longer uses param ", name));
  }
  std::set<std::string> told;  // tags already explained: one reason a tag
  for (const auto& [key, value] : now.tags) {
    std::string tag = TagOfKey(key);
    auto old = before.tags.find(key);
    if (old != before.tags.end() && old->second == value) continue;
    if (!told.insert(tag).second) continue;
    auto was = before.tag_sources.find(tag);
    auto is = now.tag_sources.find(tag);
    std::string is_source = is == now.tag_sources.end() ? "" : is->second;
    if (old == before.tags.end() && was == before.tag_sources.end()) {
      reasons.push_back(StrCat("now uses tag ", tag, " (", is_source, ")"));
    } else if (was != before.tag_sources.end() && was->second != is_source) {
      reasons.push_back(StrCat("tag ", tag, " moved (", was->second, " -> ", is_source, ")"));
    } else {
      reasons.push_back(StrCat("tag ", tag, " ", key.substr(tag.size() + 1), " changed (",
                               old == before.tags.end() ? "" : old->second, " -> ", value, ")"));
    }
  }
  for (const auto& [tag, source] : before.tag_sources) {
    if (!now.tag_sources.count(tag)) reasons.push_back(StrCat("no longer uses tag ", tag));
  }
  for (const auto& [stage, key] : now.upstream) {
    auto old = before.upstream.find(stage);
    if (old == before.upstream.end()) {
      reasons.push_back(StrCat("now needs '", stage, "'"));
    } else if (old->second != key) {
      reasons.push_back(StrCat("upstream '", stage, "' changed"));
    }
  }
  for (const auto& [stage, key] : before.upstream) {
    if (!now.upstream.count(stage)) reasons.push_back(StrCat("no longer needs '", stage, "'"));
  }
  // Same fields, different keys: the key was made by another version of longhaul.
  if (reasons.empty()) reasons.push_back("cache key format changed");
  return reasons;
}

nlohmann::json FingerprintToJson(const StageFingerprint& fp) {
  nlohmann::json json{{"key", fp.key},
                      {"definition_hash", fp.definition_hash},
                      {"params", fp.params},
                      {"upstream", fp.upstream}};
  if (!fp.tags.empty()) {
    json["tags"] = fp.tags;
    json["tag_sources"] = fp.tag_sources;
  }
  if (fp.definition) {
    json["definition"] = nlohmann::json{{"kind", fp.definition->kind},
                                        {"run", fp.definition->run},
                                        {"env", fp.definition->env},
                                        {"cache_version", fp.definition->cache_version}};
  }
  return json;
}

namespace {

void AppendJsonMap(std::string& out, const std::map<std::string, std::string>& m) {
  out += '{';
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, k);
    out += ':';
    AppendJsonString(out, v);
  }
  out += '}';
}

}  // namespace

std::string FingerprintJsonText(const StageFingerprint& fp) {
  // Keys in nlohmann's (sorted) order: definition, definition_hash, key, params, tag_sources,
  // tags, upstream.
  std::string out;
  out.reserve(256);
  out += '{';
  if (fp.definition) {
    const StageDefinition& d = *fp.definition;
    out += "\"definition\":{\"cache_version\":";
    AppendJsonString(out, d.cache_version);
    out += ",\"env\":";
    AppendJsonMap(out, d.env);
    out += ",\"kind\":";
    AppendJsonString(out, d.kind);
    out += ",\"run\":[";
    for (size_t i = 0; i < d.run.size(); ++i) {
      if (i > 0) out += ',';
      AppendJsonString(out, d.run[i]);
    }
    out += "]},";
  }
  out += "\"definition_hash\":";
  AppendJsonString(out, fp.definition_hash);
  out += ",\"key\":";
  AppendJsonString(out, fp.key);
  out += ",\"params\":";
  AppendJsonMap(out, fp.params);
  if (!fp.tags.empty()) {
    out += ",\"tag_sources\":";
    AppendJsonMap(out, fp.tag_sources);
    out += ",\"tags\":";
    AppendJsonMap(out, fp.tags);
  }
  out += ",\"upstream\":";
  AppendJsonMap(out, fp.upstream);
  out += '}';
  return out;
}

Result<StageFingerprint> FingerprintFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return absl::InvalidArgumentError("fingerprint: not a JSON object");
  StageFingerprint fp;
  RETURN_IF_ERROR(ReadString(json, "definition_hash", fp.definition_hash));
  RETURN_IF_ERROR(ReadStringMap(json, "params", fp.params));
  RETURN_IF_ERROR(ReadStringMap(json, "upstream", fp.upstream));
  RETURN_IF_ERROR(ReadString(json, "key", fp.key));
  if (json.contains("tags")) {
    RETURN_IF_ERROR(ReadStringMap(json, "tags", fp.tags));
    RETURN_IF_ERROR(ReadStringMap(json, "tag_sources", fp.tag_sources));
  }
  if (auto it = json.find("definition"); it != json.end()) {
    ASSIGN_OR_RETURN(StageDefinition def, ReadDefinition(*it));
    if (DefinitionHash(def) != fp.definition_hash) {
      return absl::DataLossError(StrCat("fingerprint: definition_hash ", fp.definition_hash,
                                        " does not match its definition"));
    }
    fp.definition = std::move(def);
  }
  if (KeyOf(fp) != fp.key) {
    return absl::DataLossError(StrCat("fingerprint: key ", fp.key, " does not match its fields"));
  }
  return fp;
}

Result<StageFingerprint> ParseFingerprintJson(std::string_view text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return absl::InvalidArgumentError("fingerprint: not valid JSON");
  return FingerprintFromJson(json);
}

}  // namespace longhaul::workflow
