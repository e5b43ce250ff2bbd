// libnvidia-ml-fake.so: a stand-in for libnvidia-ml.so.1 that exports the NVML functions the
// agent calls (agent/gpu/nvml_backend.cc), so that tests exercise the agent's real dlopen path
// without a GPU (docs/gpus.md, "The fake NVML").
//
// Driven by a JSON file named by $LONGHAUL_FAKE_NVML_STATE at nvmlInit_v2, re-read whenever it
// changes (write it elsewhere and rename it over, tests/agent/fake_nvml/fake_nvml_state.h):
//   {"init_error": 0,
//    "gpus": [{"uuid": "GPU-...", "name": "NVIDIA H200",
//              "sm_util": 50, "mem_util": 20, "mem_used": BYTES, "mem_total": BYTES,
//              "power_mw": 300000, "temp_c": 55, "sm_clock_mhz": 1980, "throttle_reasons": 0,
//              "ecc_corrected": 0, "ecc_uncorrected": 0,
//              "remapped_correctable": 0, "remapped_uncorrectable": 0,
//              "remap_pending": false, "remap_failed": false, "pcie_replays": 0,
//              "xids": [79], "lost": false,
//              "pci_bus_id": "00000000:3B:00.0", "xid_events": true}]}
// "xids" lists every XID the GPU has thrown; each is delivered once through the event set
// (a test appends to the list to throw another). "lost": every query of the GPU answers
// NVML_ERROR_GPU_IS_LOST. "xid_events": false makes nvmlDeviceRegisterEvents answer
// NVML_ERROR_NOT_SUPPORTED, as a board without XID events does (true when missing).
// Any other missing figure reads as 0 / false / "".
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
struct nvmlDevice_st {
  unsigned int index;
};
struct nvmlEventSet_st {
  int unused;
};
}

namespace {

using nvmlReturn_t = int;
constexpr nvmlReturn_t kOk = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3,
                       kInsufficientSize = 7, kTimeout = 10, kGpuIsLost = 15, kUnknown = 999;
constexpr int kMaxGpus = 64;

struct FakeGpu {
  nlohmann::json state;
  size_t xids_delivered = 0;  // survives reloads: a test appends to "xids"
  bool registered = false;
};

struct FakeNvml {
  std::mutex mu;
  bool initialized = false;
  std::string path;
  struct timespec mtime {};
  off_t size = -1;
  ino_t ino = 0;  // tests replace the file by rename: a new inode is a new state
  nlohmann::json root = nlohmann::json::object();
  FakeGpu gpus[kMaxGpus];
  size_t count = 0;
  nvmlDevice_st handles[kMaxGpus];
  nvmlEventSet_st event_set{};
};

FakeNvml& Fake() {
  static FakeNvml* fake = new FakeNvml;
  return *fake;
}

// Re-reads the state file when its size or mtime changed. Caller holds mu.
void ReloadIfChanged(FakeNvml& f) {
  if (f.path.empty()) return;
  struct stat st;
  if (::stat(f.path.c_str(), &st) != 0) return;
  if (st.st_ino == f.ino && st.st_size == f.size && st.st_mtim.tv_sec == f.mtime.tv_sec &&
      st.st_mtim.tv_nsec == f.mtime.tv_nsec) {
    return;
  }
  std::ifstream in(f.path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json root = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return;  // half-written: keep the last state
  f.ino = st.st_ino;
  f.size = st.st_size;
  f.mtime = st.st_mtim;
  f.root = std::move(root);
  const nlohmann::json& gpus = f.root.value("gpus", nlohmann::json::array());
  f.count = std::min<size_t>(gpus.size(), kMaxGpus);
  for (size_t i = 0; i < f.count; ++i) f.gpus[i].state = gpus[i];
}

// The GPU of `device`, locked and reloaded; nullptr for a bad handle.
FakeGpu* Gpu(FakeNvml& f, nvmlDevice_st* device) {
  if (device == nullptr || device < f.handles || device >= f.handles + f.count) return nullptr;
  return &f.gpus[device - f.handles];
}

template <typename T>
T Field(const FakeGpu& g, const char* key) {
  return g.state.value(key, T{});
}

// Runs `body(gpu)` for a query of `device`: the common checks of every device query.
template <typename Body>
nvmlReturn_t Query(nvmlDevice_st* device, Body body) {
  FakeNvml& f = Fake();
  std::lock_guard<std::mutex> lock(f.mu);
  if (!f.initialized) return kUninitialized;
  ReloadIfChanged(f);
  FakeGpu* g = Gpu(f, device);
  if (g == nullptr) return kInvalidArgument;
  if (Field<bool>(*g, "lost")) return kGpuIsLost;
  return body(*g);
}

nvmlReturn_t CopyString(const std::string& s, char* out, unsigned int length) {
  if (out == nullptr) return kInvalidArgument;
  if (s.size() + 1 > length) return kInsufficientSize;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return kOk;
}

}  // namespace

extern "C" {

#define FAKE_NVML_EXPORT __attribute__((visibility("default")))

struct nvmlMemory_st {
  unsigned long long total, free, used;
};
struct nvmlUtilization_st {
  unsigned int gpu, memory;
};
struct nvmlPciInfo_st {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct nvmlEventData_st {
  nvmlDevice_st* device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

FAKE_NVML_EXPORT nvmlReturn_t nvmlInit_v2() {
  FakeNvml& f = Fake();
  std::lock_guard<std::mutex> lock(f.mu);
  // A fresh start: the state file named now, every XID not yet delivered.
  const char* env = std::getenv("LONGHAUL_FAKE_NVML_STATE");
  f.path = env != nullptr ? env : "";
  f.size = -1;
  f.root = nlohmann::json::object();
  f.count = 0;
  for (FakeGpu& g : f.gpus) g = FakeGpu{};
  ReloadIfChanged(f);
  if (int e = f.root.value("init_error", 0); e != 0) return e;
  for (int i = 0; i < kMaxGpus; ++i) f.handles[i].index = static_cast<unsigned int>(i);
  f.initialized = true;
  return kOk;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlShutdown() {
  FakeNvml& f = Fake();
  std::lock_guard<std::mutex> lock(f.mu);
  f.initialized = false;
  return kOk;
}

FAKE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case kOk:
      return "Success";
    case kUninitialized:
      return "Uninitialized";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case kTimeout:
      return "Timeout";
    case kGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  FakeNvml& f = Fake();
  std::lock_guard<std::mutex> lock(f.mu);
  if (!f.initialized) return kUninitialized;
  if (count == nullptr) return kInvalidArgument;
  ReloadIfChanged(f);
  *count = static_cast<unsigned int>(f.count);
  return kOk;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                            nvmlDevice_st** device) {
  FakeNvml& f = Fake();
  std::lock_guard<std::mutex> lock(f.mu);
  if (!f.initialized) return kUninitialized;
  ReloadIfChanged(f);
  if (device == nullptr || index >= f.count) return kInvalidArgument;
  *device = &f.handles[index];
  return kOk;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_st* d, char* out, unsigned int n) {
  return Query(d, [&](FakeGpu& g) { return CopyString(Field<std::string>(g, "uuid"), out, n); });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_st* d, char* out, unsigned int n) {
  return Query(d, [&](FakeGpu& g) { return CopyString(Field<std::string>(g, "name"), out, n); });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_st* d, nvmlMemory_st* m) {
  return Query(d, [&](FakeGpu& g) {
    m->total = Field<unsigned long long>(g, "mem_total");
    m->used = Field<unsigned long long>(g, "mem_used");
    m->free = m->total > m->used ? m->total - m->used : 0;
    return kOk;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_st* d,
                                                            nvmlUtilization_st* u) {
  return Query(d, [&](FakeGpu& g) {
    u->gpu = Field<unsigned int>(g, "sm_util");
    u->memory = Field<unsigned int>(g, "mem_util");
    return kOk;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_st* d, unsigned int* mw) {
  return Query(d, [&](FakeGpu& g) {
    *mw = Field<unsigned int>(g, "power_mw");
    return kOk;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_st* d, int sensor,
                                                       unsigned int* t) {
  return Query(d, [&](FakeGpu& g) {
    if (sensor != 0) return kInvalidArgument;  // NVML_TEMPERATURE_GPU only
    *t = Field<unsigned int>(g, "temp_c");
    return kOk;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_st* d, int type,
                                                     unsigned int* mhz) {
  return Query(d, [&](FakeGpu& g) {
    if (type != 1) return kNotSupported;  // NVML_CLOCK_SM only
    *mhz = Field<unsigned int>(g, "sm_clock_mhz");
    return kOk;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_st* d,
                                                                     unsigned long long* r) {
  return Query(d, [&](FakeGpu& g) {
    *r = Field<unsigned long long>(g, "throttle_reasons");
    return kOk;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_st* d, int error_type,
                                                          int counter_type, unsigned long long* n) {
  return Query(d, [&](FakeGpu& g) {
    if (counter_type != 0) return kNotSupported;  // NVML_VOLATILE_ECC only
    *n = Field<unsigned long long>(g, error_type == 0 ? "ecc_corrected" : "ecc_uncorrected");
    return kOk;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_st* d, unsigned int* corr,
                                                        unsigned int* unc, unsigned int* pending,
                                                        unsigned int* failed) {
  return Query(d, [&](FakeGpu& g) {
    *corr = Field<unsigned int>(g, "remapped_correctable");
    *unc = Field<unsigned int>(g, "remapped_uncorrectable");
    *pending = Field<bool>(g, "remap_pending") ? 1 : 0;
    *failed = Field<bool>(g, "remap_failed") ? 1 : 0;
    return kOk;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_st* d, unsigned int* n) {
  return Query(d, [&](FakeGpu& g) {
    *n = Field<unsigned int>(g, "pcie_replays");
    return kOk;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_st* d, nvmlPciInfo_st* pci) {
  return Query(d, [&](FakeGpu& g) {
    if (pci == nullptr) return kInvalidArgument;
    *pci = nvmlPciInfo_st{};
    std::string id = Field<std::string>(g, "pci_bus_id");
    if (id.empty()) return kNotSupported;
    // "00000000:3B:00.0": the legacy field keeps four digits of the domain.
    std::snprintf(pci->busId, sizeof pci->busId, "%s", id.c_str());
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s",
                  id.size() > 4 ? id.c_str() + 4 : id.c_str());
    std::sscanf(id.c_str(), "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
    return kOk;
  });
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_st** set) {
  FakeNvml& f = Fake();
  std::lock_guard<std::mutex> lock(f.mu);
  if (!f.initialized) return kUninitialized;
  *set = &f.event_set;
  return kOk;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_st* d, unsigned long long types,
                                                       nvmlEventSet_st* set) {
  return Query(d, [&](FakeGpu& g) {
    if (set != &Fake().event_set || (types & 0x8) == 0) return kInvalidArgument;
    if (!g.state.value("xid_events", true)) return kNotSupported;
    g.registered = true;
    return kOk;
  });
}

// Never blocks: the next undelivered XID of a registered GPU, else NVML_ERROR_TIMEOUT.
FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_st* set, nvmlEventData_st* data,
                                                  unsigned int /*timeout_ms*/) {
  FakeNvml& f = Fake();
  std::lock_guard<std::mutex> lock(f.mu);
  if (!f.initialized) return kUninitialized;
  if (set != &f.event_set || data == nullptr) return kInvalidArgument;
  ReloadIfChanged(f);
  for (size_t i = 0; i < f.count; ++i) {
    FakeGpu& g = f.gpus[i];
    const nlohmann::json xids = g.state.value("xids", nlohmann::json::array());
    if (!g.registered || g.xids_delivered >= xids.size()) continue;
    if (!xids[g.xids_delivered].is_number_integer()) return kUnknown;
    data->device = &f.handles[i];
    data->eventType = 0x8;  // nvmlEventTypeXidCriticalError
    data->eventData = xids[g.xids_delivered++].get<unsigned long long>();
    data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFF;
    return kOk;
  }
  return kTimeout;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_st*) { return kOk; }

}  // extern "C"
