#include "stages/inspect/safetensors.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::inspect {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

// A header larger than this is not a drafter's (the format's own limit is 100 MB).
constexpr uint64_t kMaxHeader = 100u << 20;

Status Bad(const std::string& path, std::string_view why) {
  return absl::InvalidArgumentError(StrCat(path, ": ", why));
}

int IntegerWidth(const std::string& dtype) {
  if (dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL") return 1;
  return 0;
}

}  // namespace

Result<SafetensorsFile> SafetensorsFile::Open(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return ErrnoStatus("open", path, errno);
  SafetensorsFile f;
  f.path_ = path;
  f.file_size_ = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  uint64_t n = 0;
  if (f.file_size_ < 8 || !in.read(reinterpret_cast<char*>(&n), 8)) {
    return Bad(path, "too short for a safetensors header");
  }
  if (n > kMaxHeader || n > f.file_size_ - 8) {
    return Bad(path, StrCat("header length ", n, " does not fit the file of ", f.file_size_,
                            " bytes (not a safetensors file?)"));
  }
  std::string header(n, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(n))) {
    return Bad(path, "truncated header");
  }
  f.data_start_ = 8 + n;
  nlohmann::json doc = nlohmann::json::parse(header, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Bad(path, "header is not a JSON object");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const auto& t = it.value();
    SafetensorsEntry e;
    try {
      e.dtype = t.at("dtype").get<std::string>();
      e.shape = t.at("shape").get<std::vector<uint64_t>>();
      auto off = t.at("data_offsets").get<std::vector<uint64_t>>();
      if (off.size() != 2 || off[0] > off[1]) throw std::runtime_error("bad data_offsets");
      e.begin = off[0];
      e.end = off[1];
    } catch (const std::exception& ex) {
      return Bad(path, StrCat("tensor '", it.key(), "': ", ex.what()));
    }
    if (e.end > f.file_size_ - f.data_start_) {
      return Bad(path, StrCat("tensor '", it.key(), "' ends at data byte ", e.end,
                              ", past the end of the file (truncated?)"));
    }
    f.tensors_[it.key()] = std::move(e);
  }
  return f;
}

const SafetensorsEntry* SafetensorsFile::Find(const std::string& name,
                                              std::string* full_name) const {
  for (const auto& [k, e] : tensors_) {
    if (k == name || EndsWith(k, "." + name)) {
      if (full_name) *full_name = k;
      return &e;
    }
  }
  return nullptr;
}

Result<std::vector<int64_t>> SafetensorsFile::ReadIntegers(const std::string& name) const {
  std::string full;
  const SafetensorsEntry* e = Find(name, &full);
  if (e == nullptr) return absl::NotFoundError(StrCat(path_, ": no tensor '", name, "'"));
  int width = IntegerWidth(e->dtype);
  if (width == 0) {
    return Bad(path_, StrCat("tensor '", full, "' has dtype ", e->dtype, ", expected integers"));
  }
  uint64_t count = 1;
  for (uint64_t d : e->shape) count *= d;
  if (count * width != e->end - e->begin) {
    return Bad(path_, StrCat("tensor '", full, "': ", e->end - e->begin, " bytes for ", count,
                             " elements of ", e->dtype));
  }
  std::ifstream in(path_, std::ios::binary);
  if (!in) return ErrnoStatus("open", path_, errno);
  std::string raw(e->end - e->begin, '\0');
  in.seekg(static_cast<std::streamoff>(data_start_ + e->begin));
  if (!in.read(raw.data(), static_cast<std::streamsize>(raw.size()))) {
    return Bad(path_, StrCat("tensor '", full, "': truncated data"));
  }
  bool is_signed = e->dtype[0] == 'I';
  std::vector<int64_t> out(count);
  for (uint64_t i = 0; i < count; ++i) {
    const char* p = raw.data() + i * width;
    switch (width) {
      case 8: {
        int64_t v;
        std::memcpy(&v, p, 8);
        out[i] = v;
        break;
      }
      case 4: {
        uint32_t v;
        std::memcpy(&v, p, 4);
        out[i] = is_signed ? static_cast<int32_t>(v) : static_cast<int64_t>(v);
        break;
      }
      case 2: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        out[i] = is_signed ? static_cast<int16_t>(v) : static_cast<int64_t>(v);
        break;
      }
      default:
        out[i] = is_signed ? static_cast<int8_t>(*p) : static_cast<uint8_t>(*p);
    }
  }
  return out;
}

}  // namespace longhaul::inspect
