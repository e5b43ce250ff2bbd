// Hidden-state data as lh-extract writes it and lh-finetune reads it (docs/refengine.md).
//
// A directory holds manifest.json and binary shards. Shard layout, little-endian:
//   "LHSTATES" | u32 version = 1 | u32 hidden_size H | u32 num_aux_layers (3) | u32 count |
//   count x { u32 id_len | id | u32 L | i32 input_ids[L] | u8 loss_mask[L] |
//             f32 hidden_state[L*H] | f32 aux_hidden_state[L*3H] }
// Shards and the manifest are written atomically, so a shard listed complete is whole.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::refmodel {

struct StateSequence {
  std::string id;
  std::vector<int32_t> input_ids;
  std::vector<uint8_t> loss_mask;
  std::vector<float> hidden_state;      // L x H
  std::vector<float> aux_hidden_state;  // L x 3H (low, middle, high)
};

Status WriteStateShard(const std::string& path, int hidden_size,
                       const std::vector<StateSequence>& seqs);
// Checks the header against `hidden_size` and every length against the file.
Result<std::vector<StateSequence>> ReadStateShard(const std::string& path, int hidden_size);

struct ShardInfo {
  int index = 0;
  std::string path;  // relative to the directory
  int64_t first_sample = 0;
  int64_t samples = 0;
  int64_t tokens = 0;
  int64_t loss_tokens = 0;
  int64_t bytes = 0;
  bool complete = false;
};

struct StateManifest {
  static constexpr char kFormat[] = "longhaul-refmodel-hidden-states";
  static constexpr int kVersion = 1;

  std::string target_model_hash;
  int target_vocab_size = 0;
  int hidden_size = 0;
  int num_aux_layers = 3;
  std::vector<int> aux_layer_ids = {0, 1, 2};
  std::string data_path;
  std::string data_sha256;
  int64_t shard_size = 0;
  int64_t total_samples = 0;  // samples in the data file
  bool complete = false;      // every shard written
  std::vector<ShardInfo> shards;

  int64_t num_samples() const;
  int64_t num_tokens() const;
  int64_t num_loss_tokens() const;
  int64_t num_bytes() const;
  nlohmann::json ToJson() const;
  // Errors name the file and the field.
  static Result<StateManifest> FromJson(const nlohmann::json& j, const std::string& file);
};

Result<StateManifest> ReadStateManifest(const std::string& dir);
Status WriteStateManifest(const std::string& dir, const StateManifest& manifest);
// Every sequence of every complete shard, in sample order. FailedPrecondition if the
// extraction is not complete.
Result<std::vector<StateSequence>> LoadStates(const std::string& dir,
                                              const StateManifest& manifest);

}  // namespace longhaul::refmodel
