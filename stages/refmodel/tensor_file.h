// A small binary tensor container: the drafter's weights, d2t and t2d, and the trainer's
// optimizer state.
//
//   "LHTENSOR" (8 bytes) | u32 version = 1 | u32 count |
//   count x { u32 name_len | name | u32 dtype | u32 ndim | u64 dims[ndim] | data }
//
// Little-endian throughout; dtype 0 = float32, 1 = int64, 2 = uint8. Reading checks every
// length against the file size, so a truncated or foreign file is an error that names it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::refmodel {

enum class DType : uint32_t { kFloat32 = 0, kInt64 = 1, kUInt8 = 2 };

struct Tensor {
  DType dtype = DType::kFloat32;
  std::vector<uint64_t> shape;
  std::vector<float> f32;
  std::vector<int64_t> i64;
  std::vector<uint8_t> u8;

  static Tensor F32(std::vector<uint64_t> shape, std::vector<float> data);
  static Tensor I64(std::vector<uint64_t> shape, std::vector<int64_t> data);
  static Tensor U8(std::vector<uint64_t> shape, std::vector<uint8_t> data);
  uint64_t NumElements() const;
};

using TensorMap = std::map<std::string, Tensor>;

// Written atomically (temporary file, fsync, rename).
Status WriteTensorFile(const std::string& path, const TensorMap& tensors);
Result<TensorMap> ReadTensorFile(const std::string& path);

// The tensor `name` of `dtype` and exactly `shape`, or an error naming the file, the tensor and
// what differs ("drafter/weights.bin: tensor 'head.weight' has shape [256, 32], expected
// [512, 32]").
Result<const Tensor*> GetTensor(const TensorMap& tensors, const std::string& file,
                                const std::string& name, DType dtype,
                                const std::vector<uint64_t>& shape);

}  // namespace longhaul::refmodel
