// A minimal reader of the safetensors format (Hugging Face), enough to inspect an exported
// EAGLE-3 drafter: the header (names, dtypes, shapes) of every tensor, and the data of small
// integer tensors such as d2t and t2d.
//
//   u64 little-endian N | N bytes of JSON header | data
//   header: {"NAME": {"dtype": "I64", "shape": [32000], "data_offsets": [begin, end]}, ...,
//            "__metadata__": {...}}   (offsets relative to the start of the data)
//
// Errors name the file and what is wrong (truncated header, offsets past the end, a dtype
// that cannot be read as integers).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::inspect {

struct SafetensorsEntry {
  std::string dtype;  // "I64", "I32", "BOOL", "U8", "F32", "BF16", ...
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets in the data section
};

class SafetensorsFile {
 public:
  // Reads and checks the header only (a drafter's weights can be gigabytes).
  static Result<SafetensorsFile> Open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::map<std::string, SafetensorsEntry>& tensors() const { return tensors_; }
  // The tensor whose name is `name` or ends in "." + name ("model.d2t"); nullptr if none.
  const SafetensorsEntry* Find(const std::string& name, std::string* full_name = nullptr) const;
  // An integer or bool tensor's elements widened to int64.
  Result<std::vector<int64_t>> ReadIntegers(const std::string& name) const;

 private:
  std::string path_;
  uint64_t data_start_ = 0;
  uint64_t file_size_ = 0;
  std::map<std::string, SafetensorsEntry> tensors_;
};

}  // namespace longhaul::inspect
