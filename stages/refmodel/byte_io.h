// The reference model's binary files (tensor files, hidden-state shards) are little-endian
// values laid end to end: Put / PutArray append them to a buffer; ByteReader reads them back
// with bounds checks whose DataLoss errors name the file, the byte offset and what was being
// read ("x.bin: truncated at byte 12 reading the version").
#pragma once

#include <bit>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace longhaul::refmodel {

// The build targets little-endian x86-64 and aarch64; a big-endian host would need swaps here.
static_assert(std::endian::native == std::endian::little, "model files are little-endian");

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(v));
}
template <typename T>
void PutArray(std::string& out, const std::vector<T>& v) {
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Reads `data` (the contents of `path`) front to back. Both must outlive the reader.
class ByteReader {
 public:
  ByteReader(const std::string& data, const std::string& path) : data_(data), path_(path) {}

  Status Bytes(void* dst, size_t n, std::string_view what);
  // Reads magic.size() bytes: InvalidArgument "path: not a <kind> (bad magic)" unless they are
  // `magic`.
  Status ExpectMagic(std::string_view magic, std::string_view kind);
  template <typename T>
  Result<T> Get(std::string_view what) {
    T v{};
    RETURN_IF_ERROR(Bytes(&v, sizeof(T), what));
    return v;
  }
  // Resizes *v to n and fills it; checks the size before allocating.
  template <typename T>
  Status Array(std::vector<T>* v, size_t n, std::string_view what) {
    if (n > remaining() / sizeof(T)) return Truncated(what);
    v->resize(n);
    return Bytes(v->data(), n * sizeof(T), what);
  }
  size_t remaining() const { return data_.size() - pos_; }
  // DataLoss "path: N trailing bytes" unless everything was read.
  Status ExpectEnd() const;

 private:
  Status Truncated(std::string_view what) const;

  const std::string& data_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace longhaul::refmodel
