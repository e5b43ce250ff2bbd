// Content hashes for workflow texts and cache keys.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul {

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// Lower-case hex SHA-256 of the file at `path`, read in 1 MiB pieces. Errors name the path.
Result<std::string> Sha256File(const std::string& path);

// Incremental SHA-256 over a sequence of length-prefixed fields, so that ("ab","c") and
// ("a","bc") hash differently.
class FieldHasher {
 public:
  FieldHasher();
  ~FieldHasher();
  FieldHasher(const FieldHasher&) = delete;
  FieldHasher& operator=(const FieldHasher&) = delete;
  void Add(std::string_view field);
  std::string HexDigest();  // ends the hasher

 private:
  void* ctx_;  // EVP_MD_CTX*
};

}  // namespace longhaul
