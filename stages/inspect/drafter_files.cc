#include "stages/inspect/drafter_files.h"

#include <dirent.h>

#include <algorithm>

#include "core/fs.h"
#include "core/strings.h"
#include "stages/inspect/safetensors.h"
#include "stages/refmodel/tensor_file.h"

namespace longhaul::inspect {
namespace {

using nlohmann::json;

Result<json> ReadJsonObject(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) return absl::InvalidArgumentError(StrCat(path, ": not valid JSON"));
  if (!doc.is_object()) return absl::InvalidArgumentError(StrCat(path, ": not a JSON object"));
  return doc;
}

std::vector<std::string> ListSafetensors(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (EndsWith(name, ".safetensors")) out.push_back(dir + "/" + name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> Widen(const refmodel::Tensor& t) {
  switch (t.dtype) {
    case refmodel::DType::kInt64:
      return t.i64;
    case refmodel::DType::kUInt8:
      return std::vector<int64_t>(t.u8.begin(), t.u8.end());
    case refmodel::DType::kFloat32:
      break;
  }
  return {};
}

// One mapping tensor of the refengine layout: the tensor `name` in DIR/NAME.bin.
void ReadLhMapping(DrafterFiles& f, const std::string& name,
                   std::optional<std::vector<int64_t>>& slot, std::string& file) {
  std::string path = StrCat(f.dir, "/", name, ".bin");
  if (!PathExists(path)) return;
  file = path;
  auto tensors = refmodel::ReadTensorFile(path);
  if (!tensors.ok()) {
    f.problems.push_back(ToStd(tensors.status().message()));
    return;
  }
  auto it = tensors->find(name);
  if (it == tensors->end()) {
    f.problems.push_back(StrCat(path, ": no tensor '", name, "'"));
    return;
  }
  if (it->second.dtype == refmodel::DType::kFloat32) {
    f.problems.push_back(StrCat(path, ": tensor '", name, "' is float32, expected integers"));
    return;
  }
  slot = Widen(it->second);
}

void ReadRefengineLayout(DrafterFiles& f) {
  ReadLhMapping(f, "d2t", f.d2t, f.d2t_file);
  ReadLhMapping(f, "t2d", f.t2d, f.t2d_file);
  std::string wpath = f.dir + "/weights.bin";
  if (!PathExists(wpath)) {
    f.problems.push_back(StrCat(wpath, ": missing"));
    return;
  }
  auto weights = refmodel::ReadTensorFile(wpath);
  if (!weights.ok()) {
    f.problems.push_back(ToStd(weights.status().message()));
    return;
  }
  for (const auto& [name, t] : *weights) f.shapes[name] = t.shape;
}

void ReadSafetensorsLayout(DrafterFiles& f, const std::vector<std::string>& files) {
  for (const std::string& path : files) {
    auto st = SafetensorsFile::Open(path);
    if (!st.ok()) {
      f.problems.push_back(ToStd(st.status().message()));
      continue;
    }
    for (const auto& [name, e] : st->tensors()) f.shapes[name] = e.shape;
    for (auto [name, slot, file] :
         {std::tuple{"d2t", &f.d2t, &f.d2t_file}, std::tuple{"t2d", &f.t2d, &f.t2d_file}}) {
      if (slot->has_value() || st->Find(name) == nullptr) continue;
      *file = path;
      auto values = st->ReadIntegers(name);
      if (!values.ok()) {
        f.problems.push_back(ToStd(values.status().message()));
      } else {
        *slot = std::move(*values);
      }
    }
  }
}

std::optional<int64_t> IntKey(const json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it != j.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return std::nullopt;
}

}  // namespace

Result<DrafterFiles> ReadDrafterFiles(const std::string& dir) {
  DrafterFiles f;
  f.dir = dir;
  while (f.dir.size() > 1 && f.dir.back() == '/') f.dir.pop_back();
  std::string config = f.dir + "/config.json";
  if (!PathExists(f.dir))
    return absl::NotFoundError(StrCat("--drafter ", dir, ": no such directory"));
  if (!PathExists(config)) {
    return absl::NotFoundError(StrCat("--drafter ", dir, ": no config.json (not a drafter?)"));
  }
  ASSIGN_OR_RETURN(f.config, ReadJsonObject(config));
  std::vector<std::string> st = ListSafetensors(f.dir);
  bool lh = PathExists(f.dir + "/weights.bin") || PathExists(f.dir + "/d2t.bin") ||
            PathExists(f.dir + "/t2d.bin");
  if (lh) {
    f.format = "refengine";
    ReadRefengineLayout(f);
  } else if (!st.empty()) {
    f.format = "safetensors";
    ReadSafetensorsLayout(f, st);
  } else {
    f.format = "unknown";
    f.problems.push_back(StrCat(f.dir, ": no weights (neither weights.bin nor *.safetensors)"));
  }
  return f;
}

Result<TargetInfo> ReadTargetInfo(const std::string& path) {
  std::string file = path;
  if (PathExists(path + "/config.json")) {
    file = path + "/config.json";
  } else if (PathExists(path + "/manifest.json")) {
    file = path + "/manifest.json";
  } else if (!PathExists(path)) {
    return absl::NotFoundError(StrCat("--target-config ", path, ": no such file"));
  }
  auto doc = ReadJsonObject(file);
  if (!doc.ok()) return Annotate(doc.status(), "--target-config");
  TargetInfo t;
  t.source = file;
  // Multimodal configs (Kimi-K2.5, Llama 4, ...) keep the language model's keys here.
  json text = doc->contains("text_config") && (*doc)["text_config"].is_object()
                  ? (*doc)["text_config"]
                  : json::object();
  for (const json* j : {&*doc, &text}) {
    if (!t.vocab_size) t.vocab_size = IntKey(*j, {"target_vocab_size", "vocab_size"});
    if (!t.hidden_size) t.hidden_size = IntKey(*j, {"target_hidden_size", "hidden_size"});
    if (!t.num_layers) t.num_layers = IntKey(*j, {"num_hidden_layers", "num_layers", "n_layer"});
  }
  for (const char* k : {"target_model_hash", "model_hash"}) {
    if (doc->contains(k) && (*doc)[k].is_string()) {
      t.model_hash = (*doc)[k].get<std::string>();
      break;
    }
  }
  if (doc->contains("aux_layer_ids") && (*doc)["aux_layer_ids"].is_array()) {
    try {
      t.aux_layer_ids = (*doc)["aux_layer_ids"].get<std::vector<int64_t>>();
    } catch (const json::exception&) {
      return absl::InvalidArgumentError(StrCat(file, ": aux_layer_ids: expected integers"));
    }
  }
  if (t.empty()) {
    return absl::InvalidArgumentError(
        StrCat("--target-config ", file,
               ": none of vocab_size, target_vocab_size, hidden_size, num_hidden_layers, "
               "target_model_hash found"));
  }
  return t;
}

}  // namespace longhaul::inspect
