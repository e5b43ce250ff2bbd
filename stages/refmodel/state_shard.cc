#include "stages/refmodel/state_shard.h"

#include "core/fs.h"
#include "core/strings.h"
#include "stages/refmodel/byte_io.h"

namespace longhaul::refmodel {
namespace {

constexpr char kShardMagic[8] = {'L', 'H', 'S', 'T', 'A', 'T', 'E', 'S'};
constexpr uint32_t kShardVersion = 1;
constexpr uint32_t kAuxLayers = 3;
template <typename T>
Result<T> Field(const nlohmann::json& j, const std::string& file, const std::string& key) {
  auto it = j.find(key);
  if (it == j.end()) return absl::InvalidArgumentError(StrCat(file, ": missing '", key, "'"));
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(StrCat(file, ": '", key, "' has the wrong type: ", e.what()));
  }
}

// One count summed over the shards that were written completely.
int64_t SumComplete(const std::vector<ShardInfo>& shards, int64_t ShardInfo::*count) {
  int64_t n = 0;
  for (const ShardInfo& s : shards) n += s.complete ? s.*count : 0;
  return n;
}

}  // namespace

Status WriteStateShard(const std::string& path, int hidden_size,
                       const std::vector<StateSequence>& seqs) {
  std::string out(kShardMagic, sizeof(kShardMagic));
  Put<uint32_t>(out, kShardVersion);
  Put<uint32_t>(out, static_cast<uint32_t>(hidden_size));
  Put<uint32_t>(out, kAuxLayers);
  Put<uint32_t>(out, static_cast<uint32_t>(seqs.size()));
  for (const StateSequence& s : seqs) {
    size_t len = s.input_ids.size();
    if (s.loss_mask.size() != len || s.hidden_state.size() != len * hidden_size ||
        s.aux_hidden_state.size() != len * kAuxLayers * hidden_size) {
      return absl::InternalError(StrCat("sample '", s.id, "': inconsistent state sizes"));
    }
    Put<uint32_t>(out, static_cast<uint32_t>(s.id.size()));
    out += s.id;
    Put<uint32_t>(out, static_cast<uint32_t>(len));
    PutArray(out, s.input_ids);
    PutArray(out, s.loss_mask);
    PutArray(out, s.hidden_state);
    PutArray(out, s.aux_hidden_state);
  }
  return WriteFileAtomic(path, out);
}

Result<std::vector<StateSequence>> ReadStateShard(const std::string& path, int hidden_size) {
  ASSIGN_OR_RETURN(std::string data, ReadFile(path));
  ByteReader c(data, path);
  RETURN_IF_ERROR(c.ExpectMagic(std::string_view(kShardMagic, sizeof(kShardMagic)), "hidden-state shard"));
  ASSIGN_OR_RETURN(uint32_t version, c.Get<uint32_t>("the version"));
  ASSIGN_OR_RETURN(uint32_t h, c.Get<uint32_t>("the hidden size"));
  ASSIGN_OR_RETURN(uint32_t layers, c.Get<uint32_t>("the aux layer count"));
  ASSIGN_OR_RETURN(uint32_t count, c.Get<uint32_t>("the sample count"));
  if (version != kShardVersion) {
    return absl::InvalidArgumentError(
        StrCat(path, ": shard version ", version, ", expected ", kShardVersion));
  }
  if (h != static_cast<uint32_t>(hidden_size) || layers != kAuxLayers) {
    return absl::InvalidArgumentError(StrCat(path, ": hidden size ", h, " with ", layers,
                                             " aux layers, expected ", hidden_size, " with ",
                                             kAuxLayers));
  }
  std::vector<StateSequence> out(count);
  for (uint32_t i = 0; i < count; ++i) {
    StateSequence& s = out[i];
    ASSIGN_OR_RETURN(uint32_t id_len, c.Get<uint32_t>("an id length"));
    std::vector<char> id;
    RETURN_IF_ERROR(c.Array(&id, id_len, "an id"));
    s.id.assign(id.begin(), id.end());
    ASSIGN_OR_RETURN(uint32_t len, c.Get<uint32_t>("a sequence length"));
    std::string what = StrCat("sample '", s.id, "'");
    RETURN_IF_ERROR(c.Array(&s.input_ids, len, what));
    RETURN_IF_ERROR(c.Array(&s.loss_mask, len, what));
    RETURN_IF_ERROR(c.Array(&s.hidden_state, size_t{len} * h, what));
    RETURN_IF_ERROR(c.Array(&s.aux_hidden_state, size_t{len} * h * kAuxLayers, what));
  }
  RETURN_IF_ERROR(c.ExpectEnd());
  return out;
}

int64_t StateManifest::num_samples() const { return SumComplete(shards, &ShardInfo::samples); }
int64_t StateManifest::num_tokens() const { return SumComplete(shards, &ShardInfo::tokens); }
int64_t StateManifest::num_loss_tokens() const {
  return SumComplete(shards, &ShardInfo::loss_tokens);
}
int64_t StateManifest::num_bytes() const { return SumComplete(shards, &ShardInfo::bytes); }

nlohmann::json StateManifest::ToJson() const {
  nlohmann::json shards_json = nlohmann::json::array();
  for (const ShardInfo& s : shards) {
    shards_json.push_back({{"index", s.index},
                           {"path", s.path},
                           {"first_sample", s.first_sample},
                           {"samples", s.samples},
                           {"tokens", s.tokens},
                           {"loss_tokens", s.loss_tokens},
                           {"bytes", s.bytes},
                           {"complete", s.complete}});
  }
  return {{"format", kFormat},
          {"version", kVersion},
          {"target_model_hash", target_model_hash},
          {"target_vocab_size", target_vocab_size},
          {"hidden_size", hidden_size},
          {"num_aux_layers", num_aux_layers},
          {"aux_layer_ids", aux_layer_ids},
          {"shapes",
           {{"input_ids", {"L"}},
            {"loss_mask", {"L"}},
            {"hidden_state", {"L", hidden_size}},
            {"aux_hidden_state", {"L", num_aux_layers * hidden_size}}}},
          {"data", {{"path", data_path}, {"sha256", data_sha256}}},
          {"shard_size", shard_size},
          {"total_samples", total_samples},
          {"complete", complete},
          {"num_samples", num_samples()},
          {"num_tokens", num_tokens()},
          {"num_loss_tokens", num_loss_tokens()},
          {"bytes", num_bytes()},
          {"shards", shards_json}};
}

Result<StateManifest> StateManifest::FromJson(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) return absl::InvalidArgumentError(StrCat(file, ": not a JSON object"));
  StateManifest m;
  ASSIGN_OR_RETURN(std::string format, Field<std::string>(j, file, "format"));
  if (format != kFormat) {
    return absl::InvalidArgumentError(
        StrCat(file, ": format '", format, "', expected '", kFormat, "'"));
  }
  ASSIGN_OR_RETURN(int version, Field<int>(j, file, "version"));
  if (version != kVersion) {
    return absl::InvalidArgumentError(StrCat(file, ": version ", version, ", expected ", kVersion));
  }
  ASSIGN_OR_RETURN(m.target_model_hash, Field<std::string>(j, file, "target_model_hash"));
  ASSIGN_OR_RETURN(m.target_vocab_size, Field<int>(j, file, "target_vocab_size"));
  ASSIGN_OR_RETURN(m.hidden_size, Field<int>(j, file, "hidden_size"));
  ASSIGN_OR_RETURN(m.num_aux_layers, Field<int>(j, file, "num_aux_layers"));
  ASSIGN_OR_RETURN(m.aux_layer_ids, Field<std::vector<int>>(j, file, "aux_layer_ids"));
  ASSIGN_OR_RETURN(m.shard_size, Field<int64_t>(j, file, "shard_size"));
  ASSIGN_OR_RETURN(m.total_samples, Field<int64_t>(j, file, "total_samples"));
  ASSIGN_OR_RETURN(m.complete, Field<bool>(j, file, "complete"));
  ASSIGN_OR_RETURN(nlohmann::json data, Field<nlohmann::json>(j, file, "data"));
  ASSIGN_OR_RETURN(m.data_path, Field<std::string>(data, file + " data", "path"));
  ASSIGN_OR_RETURN(m.data_sha256, Field<std::string>(data, file + " data", "sha256"));
  if (m.num_aux_layers != static_cast<int>(kAuxLayers) || m.hidden_size < 1) {
    return absl::InvalidArgumentError(StrCat(file, ": hidden_size ", m.hidden_size, " with ",
                                             m.num_aux_layers, " aux layers is not supported"));
  }
  ASSIGN_OR_RETURN(nlohmann::json shards, Field<nlohmann::json>(j, file, "shards"));
  if (!shards.is_array()) return absl::InvalidArgumentError(StrCat(file, ": 'shards' not a list"));
  for (size_t i = 0; i < shards.size(); ++i) {
    std::string where = StrCat(file, " shards[", i, "]");
    ShardInfo s;
    ASSIGN_OR_RETURN(s.index, Field<int>(shards[i], where, "index"));
    ASSIGN_OR_RETURN(s.path, Field<std::string>(shards[i], where, "path"));
    ASSIGN_OR_RETURN(s.first_sample, Field<int64_t>(shards[i], where, "first_sample"));
    ASSIGN_OR_RETURN(s.samples, Field<int64_t>(shards[i], where, "samples"));
    ASSIGN_OR_RETURN(s.tokens, Field<int64_t>(shards[i], where, "tokens"));
    ASSIGN_OR_RETURN(s.loss_tokens, Field<int64_t>(shards[i], where, "loss_tokens"));
    ASSIGN_OR_RETURN(s.bytes, Field<int64_t>(shards[i], where, "bytes"));
    ASSIGN_OR_RETURN(s.complete, Field<bool>(shards[i], where, "complete"));
    if (s.path.empty() || s.path.find('/') != std::string::npos || s.path[0] == '.') {
      return absl::InvalidArgumentError(
          StrCat(where, ": path '", s.path, "' must be a plain file name in the directory"));
    }
    m.shards.push_back(std::move(s));
  }
  return m;
}

Result<StateManifest> ReadStateManifest(const std::string& dir) {
  const std::string path = dir + "/manifest.json";
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(StrCat(path, ": not JSON: ", e.what()));
  }
  return StateManifest::FromJson(j, path);
}

Status WriteStateManifest(const std::string& dir, const StateManifest& manifest) {
  return WriteFileAtomic(dir + "/manifest.json", manifest.ToJson().dump(2) + "\n");
}

Result<std::vector<StateSequence>> LoadStates(const std::string& dir,
                                              const StateManifest& manifest) {
  if (!manifest.complete) {
    return absl::FailedPreconditionError(
        StrCat(dir, "/manifest.json: the extraction is not complete (", manifest.num_samples(),
               " of ", manifest.total_samples, " samples); run lh-extract again to finish it"));
  }
  std::vector<StateSequence> all;
  for (const ShardInfo& s : manifest.shards) {
    ASSIGN_OR_RETURN(std::vector<StateSequence> seqs,
                     ReadStateShard(dir + "/" + s.path, manifest.hidden_size));
    if (static_cast<int64_t>(seqs.size()) != s.samples) {
      return absl::DataLossError(StrCat(dir, "/", s.path, ": holds ", seqs.size(),
                                        " samples, the manifest says ", s.samples));
    }
    for (StateSequence& q : seqs) all.push_back(std::move(q));
  }
  return all;
}

}  // namespace longhaul::refmodel
