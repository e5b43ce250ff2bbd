// What lh-inspect reads about a drafter and its target, from either checkpoint layout:
//   refengine   config.json + weights.bin / d2t.bin / t2d.bin (stages/refmodel, LHTENSOR)
//   safetensors config.json + *.safetensors holding `d2t` and `t2d` (SpecForge / EAGLE-3
//               exports for vLLM and SGLang)
// and the target's facts from an HF config.json, an lh-extract manifest.json, or flags.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::inspect {

struct DrafterFiles {
  std::string dir;
  std::string format;  // "refengine" or "safetensors"
  nlohmann::json config;
  std::optional<std::vector<int64_t>> d2t;
  std::optional<std::vector<int64_t>> t2d;  // 0/1 per target token
  std::string d2t_file, t2d_file;           // where they were read
  // Shapes of the weight tensors (safetensors headers, or weights.bin), by name.
  std::map<std::string, std::vector<uint64_t>> shapes;
  // Files that exist but could not be read, each with the reason (findings, not errors).
  std::vector<std::string> problems;
};

// Errors only when DIR or DIR/config.json cannot be read or is not a JSON object.
Result<DrafterFiles> ReadDrafterFiles(const std::string& dir);

struct TargetInfo {
  std::optional<int64_t> vocab_size;
  std::optional<int64_t> hidden_size;
  std::optional<int64_t> num_layers;
  std::optional<std::string> model_hash;
  std::optional<std::vector<int64_t>> aux_layer_ids;  // layers the target side provides
  std::string source;                                 // where the facts came from
  bool empty() const { return !vocab_size && !hidden_size && !num_layers && !model_hash; }
};

// From a JSON file, or a directory holding config.json or manifest.json. Reads HF keys
// (vocab_size, hidden_size, num_hidden_layers, also under text_config) and lh-extract's
// manifest keys (target_vocab_size, target_model_hash, hidden_size, aux_layer_ids).
Result<TargetInfo> ReadTargetInfo(const std::string& path);

}  // namespace longhaul::inspect
