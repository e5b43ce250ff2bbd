#include "agent/gpu/smi_backend.h"

#include <stdio.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {

const std::vector<std::string>& NvidiaSmiFields() {
  static const auto* fields = new std::vector<std::string>{
      "index",
      "uuid",
      "name",
      "utilization.gpu",
      "utilization.memory",
      "memory.used",
      "memory.total",
      "power.draw",
      "temperature.gpu",
      "clocks.sm",
      "clocks_throttle_reasons.active",
      "ecc.errors.corrected.volatile.total",
      "ecc.errors.uncorrected.volatile.total",
      "remapped_rows.correctable",
      "remapped_rows.uncorrectable",
      "remapped_rows.pending",
      "remapped_rows.failure",
  };
  return *fields;
}

namespace {

// "[N/A]", "[Not Supported]", "N/A" and the like: the board does not say.
bool SmiNotReported(std::string_view v) {
  return v.empty() || v.front() == '[' || v == "N/A" || v == "Not Supported";
}

Status SmiBadField(int line_no, const std::string& field, std::string_view v) {
  return absl::InvalidArgumentError(
      StrCat("nvidia-smi output line ", line_no, ": ", field, " '", v, "' is not a number"));
}

Result<std::string> RunSmi(const std::string& command) {
  FILE* f = ::popen(command.c_str(), "re");
  if (f == nullptr) return ErrnoStatus("popen", command, errno);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  int status = ::pclose(f);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::UnavailableError(StrCat(command, ": failed (status ", status, ")"));
  }
  return out;
}

class SmiBackend : public GpuBackend {
 public:
  SmiBackend(std::string smi, size_t fields) : smi_(std::move(smi)), fields_(fields) {}
  std::string name() const override { return "nvidia-smi"; }
  const std::vector<GpuInfo>& devices() const override { return devices_; }

  Result<std::vector<GpuSample>> Sample() override {
    std::vector<std::string> names(NvidiaSmiFields().begin(),
                                   NvidiaSmiFields().begin() + static_cast<long>(fields_));
    ASSIGN_OR_RETURN(std::string out,
                     RunSmi(StrCat("'", smi_, "' --query-gpu=", StrJoin(names, ","),
                                   " --format=csv,noheader,nounits 2>/dev/null")));
    return ParseNvidiaSmiSamples(out, fields_);
  }

  Status Discover() {
    auto samples = Sample();
    if (!samples.ok() && fields_ > kNvidiaSmiBasicFields) {
      fields_ = kNvidiaSmiBasicFields;  // an older nvidia-smi: the basic fields only
      samples = Sample();
    }
    if (!samples.ok()) return samples.status();
    for (const GpuSample& s : *samples) {
      GpuInfo& g = devices_.emplace_back();
      g.index = s.index;
      g.name = s.name;
      g.memory_mib = s.mem_total_bytes.value_or(0) >> 20;
      g.uuid = s.uuid;
    }
    // The bus ids, once (the kernel log names GPUs by them): "0, 00000000:3B:00.0" a line. A
    // line that does not read so leaves that GPU without one.
    auto ids = RunSmi(
        StrCat("'", smi_, "' --query-gpu=index,pci.bus_id --format=csv,noheader", " 2>/dev/null"));
    for (const std::string& line : ids.ok() ? StrSplit(*ids, '\n') : std::vector<std::string>{}) {
      std::vector<std::string> parts = StrSplit(line, ',');
      std::optional<int64_t> index =
          parts.size() == 2 ? ParseInt64(StripWhitespace(parts[0])) : std::nullopt;
      for (GpuInfo& g : devices_) {
        if (index && g.index == *index) g.pci_bus_id = std::string(StripWhitespace(parts[1]));
      }
    }
    return absl::OkStatus();
  }

 private:
  std::string smi_;
  size_t fields_;
  std::vector<GpuInfo> devices_;
};

}  // namespace

Result<std::vector<GpuSample>> ParseNvidiaSmiSamples(const std::string& output, size_t fields) {
  const std::vector<std::string>& names = NvidiaSmiFields();
  if (fields < kNvidiaSmiBasicFields || fields > names.size()) {
    return absl::InvalidArgumentError(StrCat("nvidia-smi query of ", fields, " fields"));
  }
  std::vector<GpuSample> out;
  int line_no = 0;
  for (const std::string& raw : StrSplit(output, '\n')) {
    ++line_no;
    if (StripWhitespace(raw).empty()) continue;
    std::vector<std::string> parts = StrSplit(raw, ',');
    if (parts.size() != fields) {
      return absl::InvalidArgumentError(StrCat("nvidia-smi output line ", line_no, ": '",
                                               StripWhitespace(raw), "': expected ", fields,
                                               " comma-separated fields"));
    }
    GpuSample s;
    std::vector<std::string_view> v;
    for (const std::string& p : parts) v.push_back(StripWhitespace(p));
    auto number = [&](size_t i) -> Result<std::optional<double>> {
      if (SmiNotReported(v[i])) return std::optional<double>();
      std::optional<double> d = ParseDouble(v[i]);
      if (!d) return SmiBadField(line_no, names[i], v[i]);
      return d;
    };
    ASSIGN_OR_RETURN(std::optional<double> index, number(0));
    if (!index) return SmiBadField(line_no, names[0], v[0]);
    s.index = static_cast<int>(*index);
    s.uuid = std::string(v[1]);
    s.name = std::string(v[2]);
    ASSIGN_OR_RETURN(s.sm_util_pct, number(3));
    ASSIGN_OR_RETURN(s.mem_util_pct, number(4));
    ASSIGN_OR_RETURN(std::optional<double> used_mib, number(5));
    ASSIGN_OR_RETURN(std::optional<double> total_mib, number(6));
    if (used_mib) s.mem_used_bytes = static_cast<int64_t>(*used_mib) << 20;
    if (total_mib) s.mem_total_bytes = static_cast<int64_t>(*total_mib) << 20;
    ASSIGN_OR_RETURN(s.power_watts, number(7));
    ASSIGN_OR_RETURN(s.temperature_c, number(8));
    ASSIGN_OR_RETURN(s.sm_clock_mhz, number(9));
    if (fields > 10 && !SmiNotReported(v[10])) {
      // A hex mask: "0x0000000000000004".
      char* end = nullptr;
      std::string text(v[10]);
      unsigned long long mask = std::strtoull(text.c_str(), &end, 16);
      if (*end != '\0') return SmiBadField(line_no, names[10], v[10]);
      s.throttle_reasons = mask;
    }
    auto count = [&](size_t i, std::optional<uint64_t>* out) -> Status {
      if (fields <= i) return absl::OkStatus();
      ASSIGN_OR_RETURN(std::optional<double> d, number(i));
      if (d) *out = static_cast<uint64_t>(*d);
      return absl::OkStatus();
    };
    RETURN_IF_ERROR(count(11, &s.ecc_corrected));
    RETURN_IF_ERROR(count(12, &s.ecc_uncorrected));
    RETURN_IF_ERROR(count(13, &s.remapped_correctable));
    RETURN_IF_ERROR(count(14, &s.remapped_uncorrectable));
    // "Yes"/"No" or 1/0.
    auto flag = [&](size_t i, std::optional<bool>* out) -> Status {
      if (fields <= i || SmiNotReported(v[i])) return absl::OkStatus();
      if (v[i] == "Yes" || v[i] == "1") {
        *out = true;
      } else if (v[i] == "No" || v[i] == "0") {
        *out = false;
      } else {
        return absl::InvalidArgumentError(StrCat("nvidia-smi output line ", line_no, ": ", names[i],
                                                 " '", v[i], "': expected Yes or No"));
      }
      return absl::OkStatus();
    };
    RETURN_IF_ERROR(flag(15, &s.remap_pending));
    RETURN_IF_ERROR(flag(16, &s.remap_failed));
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::unique_ptr<GpuBackend>> OpenNvidiaSmi(const std::string& nvidia_smi) {
  auto backend = std::make_unique<SmiBackend>(nvidia_smi, NvidiaSmiFields().size());
  RETURN_IF_ERROR(backend->Discover());
  return std::unique_ptr<GpuBackend>(std::move(backend));
}

}  // namespace longhaul::agent
