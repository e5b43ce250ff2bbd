#include "agent/gpu/nvml_backend.h"

#include <dlfcn.h>

#include <cstring>
#include <map>

#include "core/strings.h"

namespace longhaul::agent {
namespace {

// NVML's C interface as nvml.h declares it; only what this backend calls.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlEventSet_t = struct nvmlEventSet_st*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
// nvmlPciInfo_t: busId is "00000000:3B:00.0"; the legacy field has a four-digit domain.
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlErrorTimeout = 10;
constexpr nvmlReturn_t kNvmlErrorGpuIsLost = 15;
constexpr unsigned long long kNvmlEventTypeXidCriticalError = 0x8;
constexpr int kNvmlTemperatureGpu = 0;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlMemoryErrorCorrected = 0, kNvmlMemoryErrorUncorrected = 1;
constexpr int kNvmlVolatileEcc = 0;
constexpr unsigned int kNvmlBufferSize = 96;  // NVML_DEVICE_{UUID,NAME}_V2_BUFFER_SIZE

struct NvmlApi {
  nvmlReturn_t (*Init)();
  nvmlReturn_t (*Shutdown)();
  const char* (*ErrorString)(nvmlReturn_t);
  nvmlReturn_t (*GetCount)(unsigned int*);
  nvmlReturn_t (*GetHandleByIndex)(unsigned int, nvmlDevice_t*);
  nvmlReturn_t (*GetUuid)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*GetName)(nvmlDevice_t, char*, unsigned int);
  nvmlReturn_t (*GetMemoryInfo)(nvmlDevice_t, nvmlMemory_t*);
  // Optional: a figure whose function is missing (an older driver) is left absent.
  nvmlReturn_t (*GetUtilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*GetPowerUsage)(nvmlDevice_t, unsigned int*) = nullptr;  // milliwatts
  nvmlReturn_t (*GetTemperature)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*GetClockInfo)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*GetClockReasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*GetTotalEccErrors)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*GetRemappedRows)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*,
                                  unsigned int*) = nullptr;
  nvmlReturn_t (*GetPcieReplayCounter)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*GetPciInfo)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*EventSetCreate)(nvmlEventSet_t*) = nullptr;
  nvmlReturn_t (*RegisterEvents)(nvmlDevice_t, unsigned long long, nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*EventSetWait)(nvmlEventSet_t, nvmlEventData_t*, unsigned int) = nullptr;
  nvmlReturn_t (*EventSetFree)(nvmlEventSet_t) = nullptr;
};

template <typename F>
void LoadNvmlSymbol(void* lib, const char* symbol, F* out) {
  *out = reinterpret_cast<F>(::dlsym(lib, symbol));
}

class NvmlBackend : public GpuBackend {
 public:
  NvmlBackend(void* lib, const NvmlApi& api) : lib_(lib), api_(api) {}
  ~NvmlBackend() override {
    if (events_ != nullptr && api_.EventSetFree != nullptr) api_.EventSetFree(events_);
    api_.Shutdown();
    ::dlclose(lib_);
  }

  std::string name() const override { return "nvml"; }
  const std::vector<GpuInfo>& devices() const override { return devices_; }

  std::string Error(nvmlReturn_t r) const {
    const char* s = api_.ErrorString(r);
    return StrCat(s != nullptr ? s : "unknown error", " (", r, ")");
  }

  Status Discover() {
    unsigned int count = 0;
    if (nvmlReturn_t r = api_.GetCount(&count); r != kNvmlSuccess) {
      return absl::UnavailableError(StrCat("nvmlDeviceGetCount_v2: ", Error(r)));
    }
    if (api_.EventSetCreate != nullptr && api_.RegisterEvents != nullptr &&
        api_.EventSetWait != nullptr && api_.EventSetCreate(&events_) != kNvmlSuccess) {
      events_ = nullptr;
    }
    for (unsigned int i = 0; i < count; ++i) {
      nvmlDevice_t h = nullptr;
      GpuInfo info;
      info.index = static_cast<int>(i);
      nvmlReturn_t r = api_.GetHandleByIndex(i, &h);
      if (r != kNvmlSuccess) {
        // Listed, yet not reachable (e.g. lost): keep its index so it is reported, not hidden.
        info.name = StrCat("unreadable: ", Error(r));
        handles_.push_back(nullptr);
        devices_.push_back(info);
        continue;
      }
      char buf[kNvmlBufferSize];
      if (api_.GetUuid(h, buf, sizeof buf) == kNvmlSuccess) info.uuid = Terminated(buf);
      if (api_.GetName(h, buf, sizeof buf) == kNvmlSuccess) info.name = Terminated(buf);
      nvmlMemory_t mem{};
      if (api_.GetMemoryInfo(h, &mem) == kNvmlSuccess) {
        info.memory_mib = static_cast<int64_t>(mem.total >> 20);
      }
      if (nvmlPciInfo_t pci{}; api_.GetPciInfo && api_.GetPciInfo(h, &pci) == kNvmlSuccess) {
        pci.busId[sizeof pci.busId - 1] = '\0';
        info.pci_bus_id = pci.busId;
      }
      if (events_ != nullptr) {
        // NOT_SUPPORTED on boards without XID events: their XIDs come from the kernel log
        // (kernel_log_xids.h).
        info.xid_events =
            api_.RegisterEvents(h, kNvmlEventTypeXidCriticalError, events_) == kNvmlSuccess;
      }
      by_handle_[h] = static_cast<int>(i);
      handles_.push_back(h);
      devices_.push_back(std::move(info));
    }
    return absl::OkStatus();
  }

  Result<std::vector<GpuSample>> Sample() override {
    std::vector<GpuSample> out;
    out.reserve(devices_.size());
    std::map<int, std::vector<int>> xids = DrainXids();
    for (size_t i = 0; i < devices_.size(); ++i) {
      GpuSample& s = out.emplace_back();
      s.index = devices_[i].index;
      s.uuid = devices_[i].uuid;
      s.name = devices_[i].name;
      if (auto it = xids.find(s.index); it != xids.end()) s.xids = std::move(it->second);
      if (handles_[i] == nullptr) {
        s.lost = true;
        continue;
      }
      ReadDevice(handles_[i], s);
    }
    return out;
  }

 private:
  static std::string Terminated(char* buf) {
    buf[kNvmlBufferSize - 1] = '\0';
    return std::string(buf);
  }

  // Every XID event waiting in the set, without blocking (timeout 0), by GPU index.
  std::map<int, std::vector<int>> DrainXids() {
    std::map<int, std::vector<int>> xids;
    if (events_ == nullptr) return xids;
    for (int guard = 0; guard < 1024; ++guard) {
      nvmlEventData_t data{};
      nvmlReturn_t r = api_.EventSetWait(events_, &data, 0);
      if (r == kNvmlErrorTimeout || r != kNvmlSuccess) break;  // timeout: nothing waiting
      if ((data.eventType & kNvmlEventTypeXidCriticalError) == 0) continue;
      auto it = by_handle_.find(data.device);
      if (it != by_handle_.end()) xids[it->second].push_back(static_cast<int>(data.eventData));
    }
    return xids;
  }

  void ReadDevice(nvmlDevice_t h, GpuSample& s) {
    // One GPU_IS_LOST from any call marks the GPU lost; other errors leave a figure absent.
    auto ok = [&s](nvmlReturn_t r) {
      if (r == kNvmlErrorGpuIsLost) s.lost = true;
      return r == kNvmlSuccess;
    };
    nvmlMemory_t mem{};
    if (ok(api_.GetMemoryInfo(h, &mem))) {
      s.mem_used_bytes = static_cast<int64_t>(mem.used);
      s.mem_total_bytes = static_cast<int64_t>(mem.total);
    }
    if (s.lost) return;
    unsigned int v = 0;
    unsigned long long ull = 0;
    if (nvmlUtilization_t u{}; api_.GetUtilization && ok(api_.GetUtilization(h, &u))) {
      s.sm_util_pct = u.gpu;
      s.mem_util_pct = u.memory;
    }
    if (api_.GetPowerUsage && ok(api_.GetPowerUsage(h, &v))) s.power_watts = v / 1000.0;
    if (api_.GetTemperature && ok(api_.GetTemperature(h, kNvmlTemperatureGpu, &v))) {
      s.temperature_c = v;
    }
    if (api_.GetClockInfo && ok(api_.GetClockInfo(h, kNvmlClockSm, &v))) s.sm_clock_mhz = v;
    if (api_.GetClockReasons && ok(api_.GetClockReasons(h, &ull))) s.throttle_reasons = ull;
    if (api_.GetTotalEccErrors) {
      if (ok(api_.GetTotalEccErrors(h, kNvmlMemoryErrorCorrected, kNvmlVolatileEcc, &ull))) {
        s.ecc_corrected = ull;
      }
      if (ok(api_.GetTotalEccErrors(h, kNvmlMemoryErrorUncorrected, kNvmlVolatileEcc, &ull))) {
        s.ecc_uncorrected = ull;
      }
    }
    unsigned int corr = 0, unc = 0, pending = 0, failed = 0;
    if (api_.GetRemappedRows && ok(api_.GetRemappedRows(h, &corr, &unc, &pending, &failed))) {
      s.remapped_correctable = corr;
      s.remapped_uncorrectable = unc;
      s.remap_pending = pending != 0;
      s.remap_failed = failed != 0;
    }
    if (api_.GetPcieReplayCounter && ok(api_.GetPcieReplayCounter(h, &v))) s.pcie_replays = v;
  }

  void* lib_;
  NvmlApi api_;
  nvmlEventSet_t events_ = nullptr;
  std::vector<GpuInfo> devices_;
  std::vector<nvmlDevice_t> handles_;  // per devices_ entry; nullptr: unreachable
  std::map<nvmlDevice_t, int> by_handle_;
};

}  // namespace

Result<std::unique_ptr<GpuBackend>> OpenNvml(const std::string& library) {
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = ::dlerror();
    return absl::UnavailableError(StrCat("NVML not loaded: ", err != nullptr ? err : library));
  }
  NvmlApi api{};
  std::string missing;  // the first required function the library lacks
  auto required = [&](const char* symbol, auto* out) {
    LoadNvmlSymbol(lib, symbol, out);
    if (*out == nullptr && missing.empty()) missing = symbol;
  };
  required("nvmlInit_v2", &api.Init);
  required("nvmlShutdown", &api.Shutdown);
  required("nvmlErrorString", &api.ErrorString);
  required("nvmlDeviceGetCount_v2", &api.GetCount);
  required("nvmlDeviceGetHandleByIndex_v2", &api.GetHandleByIndex);
  required("nvmlDeviceGetUUID", &api.GetUuid);
  required("nvmlDeviceGetName", &api.GetName);
  required("nvmlDeviceGetMemoryInfo", &api.GetMemoryInfo);
  if (!missing.empty()) {
    ::dlclose(lib);
    return absl::UnavailableError(StrCat("NVML not usable: ", library, " has no ", missing));
  }
  LoadNvmlSymbol(lib, "nvmlDeviceGetUtilizationRates", &api.GetUtilization);
  LoadNvmlSymbol(lib, "nvmlDeviceGetPowerUsage", &api.GetPowerUsage);
  LoadNvmlSymbol(lib, "nvmlDeviceGetTemperature", &api.GetTemperature);
  LoadNvmlSymbol(lib, "nvmlDeviceGetClockInfo", &api.GetClockInfo);
  // The name since driver 535; the older one otherwise.
  LoadNvmlSymbol(lib, "nvmlDeviceGetCurrentClocksEventReasons", &api.GetClockReasons);
  if (api.GetClockReasons == nullptr) {
    LoadNvmlSymbol(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &api.GetClockReasons);
  }
  LoadNvmlSymbol(lib, "nvmlDeviceGetTotalEccErrors", &api.GetTotalEccErrors);
  LoadNvmlSymbol(lib, "nvmlDeviceGetRemappedRows", &api.GetRemappedRows);
  LoadNvmlSymbol(lib, "nvmlDeviceGetPcieReplayCounter", &api.GetPcieReplayCounter);
  LoadNvmlSymbol(lib, "nvmlDeviceGetPciInfo_v3", &api.GetPciInfo);
  LoadNvmlSymbol(lib, "nvmlEventSetCreate", &api.EventSetCreate);
  LoadNvmlSymbol(lib, "nvmlDeviceRegisterEvents", &api.RegisterEvents);
  LoadNvmlSymbol(lib, "nvmlEventSetWait_v2", &api.EventSetWait);
  LoadNvmlSymbol(lib, "nvmlEventSetFree", &api.EventSetFree);
  if (nvmlReturn_t r = api.Init(); r != kNvmlSuccess) {
    const char* s = api.ErrorString(r);
    // The message first: `s` lives in the library.
    Status error = absl::UnavailableError(
        StrCat("NVML not usable: nvmlInit_v2: ", s != nullptr ? s : "error", " (", r, ")"));
    ::dlclose(lib);
    return error;
  }
  auto backend = std::make_unique<NvmlBackend>(lib, api);
  RETURN_IF_ERROR(backend->Discover());
  return std::unique_ptr<GpuBackend>(std::move(backend));
}

}  // namespace longhaul::agent
