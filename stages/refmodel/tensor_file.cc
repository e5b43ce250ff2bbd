#include "stages/refmodel/tensor_file.h"

#include "core/fs.h"
#include "core/strings.h"
#include "stages/refmodel/byte_io.h"

namespace longhaul::refmodel {
namespace {

constexpr char kTensorMagic[8] = {'L', 'H', 'T', 'E', 'N', 'S', 'O', 'R'};
constexpr uint32_t kVersion = 1;

size_t ElementSize(DType d) {
  switch (d) {
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
      return 8;
    case DType::kUInt8:
      return 1;
  }
  return 0;
}

std::string ShapeText(const std::vector<uint64_t>& shape) {
  std::vector<std::string> parts;
  for (uint64_t d : shape) parts.push_back(std::to_string(d));
  return StrCat("[", StrJoin(parts, ", "), "]");
}

const char* DTypeName(DType d) {
  switch (d) {
    case DType::kFloat32:
      return "float32";
    case DType::kInt64:
      return "int64";
    case DType::kUInt8:
      return "uint8";
  }
  return "?";
}

}  // namespace

Tensor Tensor::F32(std::vector<uint64_t> shape, std::vector<float> data) {
  Tensor t;
  t.dtype = DType::kFloat32;
  t.shape = std::move(shape);
  t.f32 = std::move(data);
  return t;
}
Tensor Tensor::I64(std::vector<uint64_t> shape, std::vector<int64_t> data) {
  Tensor t;
  t.dtype = DType::kInt64;
  t.shape = std::move(shape);
  t.i64 = std::move(data);
  return t;
}
Tensor Tensor::U8(std::vector<uint64_t> shape, std::vector<uint8_t> data) {
  Tensor t;
  t.dtype = DType::kUInt8;
  t.shape = std::move(shape);
  t.u8 = std::move(data);
  return t;
}

uint64_t Tensor::NumElements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

Status WriteTensorFile(const std::string& path, const TensorMap& tensors) {
  std::string out(kTensorMagic, sizeof(kTensorMagic));
  Put<uint32_t>(out, kVersion);
  Put<uint32_t>(out, static_cast<uint32_t>(tensors.size()));
  for (const auto& [name, t] : tensors) {
    Put<uint32_t>(out, static_cast<uint32_t>(name.size()));
    out += name;
    Put<uint32_t>(out, static_cast<uint32_t>(t.dtype));
    Put<uint32_t>(out, static_cast<uint32_t>(t.shape.size()));
    for (uint64_t d : t.shape) Put<uint64_t>(out, d);
    const void* data = nullptr;
    size_t count = 0;
    switch (t.dtype) {
      case DType::kFloat32:
        data = t.f32.data();
        count = t.f32.size();
        break;
      case DType::kInt64:
        data = t.i64.data();
        count = t.i64.size();
        break;
      case DType::kUInt8:
        data = t.u8.data();
        count = t.u8.size();
        break;
    }
    if (count != t.NumElements()) {
      return absl::InternalError(StrCat(path, ": tensor '", name, "' holds ", count,
                                        " elements but its shape says ", t.NumElements()));
    }
    out.append(static_cast<const char*>(data), count * ElementSize(t.dtype));
  }
  return WriteFileAtomic(path, out);
}

Result<TensorMap> ReadTensorFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string data, ReadFile(path));
  ByteReader r(data, path);
  RETURN_IF_ERROR(r.ExpectMagic(std::string_view(kTensorMagic, sizeof(kTensorMagic)), "longhaul tensor file"));
  ASSIGN_OR_RETURN(uint32_t version, r.Get<uint32_t>("the version"));
  if (version != kVersion) {
    return absl::InvalidArgumentError(
        StrCat(path, ": tensor file version ", version, ", expected ", kVersion));
  }
  ASSIGN_OR_RETURN(uint32_t count, r.Get<uint32_t>("the tensor count"));
  TensorMap out;
  for (uint32_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(uint32_t name_len, r.Get<uint32_t>("a tensor name length"));
    if (name_len > r.remaining()) {
      return absl::DataLossError(StrCat(path, ": tensor ", i, " name length ", name_len,
                                        " runs past the end of the file"));
    }
    std::string name(name_len, '\0');
    RETURN_IF_ERROR(r.Bytes(name.data(), name_len, "a tensor name"));
    Tensor t;
    ASSIGN_OR_RETURN(uint32_t dtype, r.Get<uint32_t>(StrCat("the dtype of '", name, "'")));
    if (dtype > 2) {
      return absl::InvalidArgumentError(
          StrCat(path, ": tensor '", name, "' has unknown dtype ", dtype));
    }
    t.dtype = static_cast<DType>(dtype);
    ASSIGN_OR_RETURN(uint32_t ndim, r.Get<uint32_t>(StrCat("the rank of '", name, "'")));
    if (ndim > 8) {
      return absl::InvalidArgumentError(StrCat(path, ": tensor '", name, "' has rank ", ndim));
    }
    for (uint32_t d = 0; d < ndim; ++d) {
      ASSIGN_OR_RETURN(uint64_t dim, r.Get<uint64_t>(StrCat("the shape of '", name, "'")));
      t.shape.push_back(dim);
    }
    uint64_t n = t.NumElements();
    size_t es = ElementSize(t.dtype);
    if (n > r.remaining() / es) {
      return absl::DataLossError(StrCat(path, ": tensor '", name, "' of shape ", ShapeText(t.shape),
                                        " runs past the end of the file"));
    }
    std::string what = StrCat("the data of '", name, "'");
    switch (t.dtype) {
      case DType::kFloat32:
        RETURN_IF_ERROR(r.Array(&t.f32, n, what));
        break;
      case DType::kInt64:
        RETURN_IF_ERROR(r.Array(&t.i64, n, what));
        break;
      case DType::kUInt8:
        RETURN_IF_ERROR(r.Array(&t.u8, n, what));
        break;
    }
    out.emplace(std::move(name), std::move(t));
  }
  RETURN_IF_ERROR(r.ExpectEnd());
  return out;
}

Result<const Tensor*> GetTensor(const TensorMap& tensors, const std::string& file,
                                const std::string& name, DType dtype,
                                const std::vector<uint64_t>& shape) {
  auto it = tensors.find(name);
  if (it == tensors.end()) {
    return absl::InvalidArgumentError(StrCat(file, ": missing tensor '", name, "'"));
  }
  const Tensor& t = it->second;
  if (t.dtype != dtype) {
    return absl::InvalidArgumentError(StrCat(file, ": tensor '", name, "' is ", DTypeName(t.dtype),
                                             ", expected ", DTypeName(dtype)));
  }
  if (t.shape != shape) {
    return absl::InvalidArgumentError(StrCat(file, ": tensor '", name, "' has shape ",
                                             ShapeText(t.shape), ", expected ", ShapeText(shape)));
  }
  return &t;
}

}  // namespace longhaul::refmodel
