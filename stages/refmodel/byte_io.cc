#include "stages/refmodel/byte_io.h"

#include <cstring>

#include "core/strings.h"

namespace longhaul::refmodel {

Status ByteReader::Bytes(void* dst, size_t n, std::string_view what) {
  if (n > remaining()) return Truncated(what);
  std::memcpy(dst, data_.data() + pos_, n);
  pos_ += n;
  return OkStatus();
}

Status ByteReader::ExpectMagic(std::string_view magic, std::string_view kind) {
  std::string got(magic.size(), '\0');
  RETURN_IF_ERROR(Bytes(got.data(), got.size(), "the magic"));
  if (got != magic) {
    return absl::InvalidArgumentError(StrCat(path_, ": not a ", kind, " (bad magic)"));
  }
  return OkStatus();
}

Status ByteReader::ExpectEnd() const {
  if (remaining() == 0) return OkStatus();
  return absl::DataLossError(StrCat(path_, ": ", remaining(), " trailing bytes"));
}

Status ByteReader::Truncated(std::string_view what) const {
  return absl::DataLossError(StrCat(path_, ": truncated at byte ", pos_, " reading ", what));
}

}  // namespace longhaul::refmodel
