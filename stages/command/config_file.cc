#include "stages/command/config_file.h"

#include <yaml-cpp/yaml.h>

#include "core/strings.h"

namespace longhaul::command {
namespace {

// One key of the document: a value, or a section of further keys (in the order given).
struct Entry {
  std::string name;
  bool section = false;
  YAML::Node value;
  std::vector<Entry> children;
};

Entry* Child(std::vector<Entry>& entries, const std::string& name) {
  for (Entry& e : entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

// A value as it was read: a quoted scalar stays quoted ("5" stays a string), so the reader of
// the file sees the type the pair gave it.
void EmitValue(YAML::Emitter& out, const YAML::Node& v) {
  if (v.IsSequence()) {
    out << YAML::Flow << YAML::BeginSeq;
    for (const YAML::Node& item : v) EmitValue(out, item);
    out << YAML::EndSeq;
  } else if (v.IsMap()) {
    out << YAML::Flow << YAML::BeginMap;
    for (const auto& kv : v) {
      out << YAML::Key;
      EmitValue(out, kv.first);
      out << YAML::Value;
      EmitValue(out, kv.second);
    }
    out << YAML::EndMap;
  } else if (v.IsScalar() && v.Tag() == "!") {
    out << YAML::DoubleQuoted << v.Scalar();
  } else {
    out << v;
  }
}

void Emit(YAML::Emitter& out, const std::vector<Entry>& entries) {
  out << YAML::BeginMap;
  for (const Entry& e : entries) {
    out << YAML::Key << e.name << YAML::Value;
    if (e.section) {
      Emit(out, e.children);
    } else {
      EmitValue(out, e.value);
    }
  }
  out << YAML::EndMap;
}

}  // namespace

Result<std::string> RenderConfigYaml(const std::vector<std::string>& sets) {
  std::vector<Entry> root;
  for (const std::string& set : sets) {
    auto bad = [&](const std::string& why) {
      return absl::InvalidArgumentError(StrCat("--config-set '", set, "': ", why));
    };
    size_t eq = set.find('=');
    if (eq == std::string::npos) return bad("expected KEY=VALUE");
    std::string key = set.substr(0, eq), text = set.substr(eq + 1);
    std::vector<std::string> path = StrSplit(key, '.');
    for (const std::string& part : path) {
      if (part.empty()) return bad("empty key segment");
    }
    YAML::Node value;
    try {
      value = text.empty() ? YAML::Node(std::string()) : YAML::Load(text);
    } catch (const YAML::Exception& e) {
      return bad(StrCat("the value is not valid YAML: ", e.msg));
    }
    std::vector<Entry>* level = &root;
    for (size_t i = 0; i < path.size(); ++i) {
      bool last = i + 1 == path.size();
      std::string so_far = StrJoin(std::vector<std::string>(path.begin(), path.begin() + i + 1), ".");
      Entry* e = Child(*level, path[i]);
      if (e == nullptr) {
        level->push_back(Entry{path[i], !last, {}, {}});
        e = &level->back();
      } else if (last) {
        return bad(e->section ? StrCat("'", so_far, "' is already a section")
                              : StrCat("'", so_far, "' is given twice"));
      } else if (!e->section) {
        return bad(StrCat("'", so_far, "' is already a value"));
      }
      if (last) e->value = value;
      level = &e->children;
    }
  }
  YAML::Emitter out;
  Emit(out, root);
  if (!out.good()) return absl::InternalError(StrCat("writing the config: ", out.GetLastError()));
  return StrCat(out.c_str(), "\n");
}

}  // namespace longhaul::command
