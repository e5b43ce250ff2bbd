#include "stages/gpucheck/gpucheck_app.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "core/fs.h"
#include "core/strings.h"
#include "stages/gpucheck/burn_kernel.h"

namespace longhaul::gpucheck {
namespace {

// What happened to one GPU.
struct GpuReport {
  GpuHandle gpu;
  std::string failure;  // "": passed every check run so far; else "CHECK: what went wrong"
  MemoryCheckResult memory;
  BurnCheckResult burn;
  std::optional<double> p2p_min_gbps;  // the slowest copy out of this GPU
  std::string p2p_slowest_peer;
};

std::string FormatFixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return StrCat(FormatFixed(bytes / double(1ull << 30), 2), " GiB");
  return StrCat(FormatFixed(bytes / double(1ull << 20), 1), " MiB");
}

std::string VisibleDevicesNote() {
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  if (cvd == nullptr) return "";
  return StrCat(" (CUDA_VISIBLE_DEVICES=\"", cvd, "\")");
}

std::string MemoryFailure(const MemoryCheckResult& m, size_t patterns) {
  std::vector<std::string> firsts;
  for (const Mismatch& mm : m.first_failed.first) firsts.push_back(DescribeMismatch(mm));
  return StrCat("memory: ", m.errors, " wrong 32-bit word", m.errors == 1 ? "" : "s", " in ",
                FormatBytes(m.bytes_tested), " over ", patterns, " pattern",
                patterns == 1 ? "" : "s", "; first in pattern ", PatternName(m.failed_pattern),
                " at ", StrJoin(firsts, "; "));
}

std::string BurnFailure(const BurnCheckResult& b) {
  char got[64], want[64];
  std::snprintf(want, sizeof want, "%.9g", b.expected);
  std::snprintf(got, sizeof got, "%.9g", b.got);
  return StrCat("burn: launch ", b.launches, " of ", kBurnKernelName, " stored ", b.wrong,
                " wrong result", b.wrong == 1 ? "" : "s", ", first at thread ",
                b.first_wrong_thread, ": expected ", want, ", got ", got);
}

class GpucheckRun {
 public:
  GpucheckRun(const GpucheckOptions& options, EventWriter& events, std::ostream& out,
              std::ostream& err)
      : options_(options), events_(events), out_(out), err_(err) {}

  int Run() {
    auto loaded = LoadCudaDriver(options_.cuda_library);
    if (!loaded.ok()) return NoDriver(ToStd(loaded.status().message()));
    driver_ = std::move(*loaded);
    const CudaApi& api = driver_->api();
    if (CUresult r = api.Init(0); r != kCudaSuccess) {
      if (r == kCudaErrorNoDevice) return NoDriver(StrCat("no GPU visible", VisibleDevicesNote()));
      return NoDriver(StrCat("cuInit: ", driver_->ErrorText(r)));
    }
    int count = 0;
    if (CUresult r = api.DeviceGetCount(&count); r != kCudaSuccess) {
      return NoDriver(StrCat("cuDeviceGetCount: ", driver_->ErrorText(r)));
    }
    if (count == 0) return NoDriver(StrCat("no GPU visible", VisibleDevicesNote()));
    std::vector<int> ordinals = options_.gpus;
    if (ordinals.empty()) {
      for (int i = 0; i < count; ++i) ordinals.push_back(i);
    }
    for (size_t i = 0; i < ordinals.size(); ++i) {
      const int o = ordinals[i];
      if (std::find(ordinals.begin(), ordinals.begin() + i, o) != ordinals.begin() + i) {
        err_ << "lh-gpucheck: --gpus: GPU " << o << " is given twice\n";
        return kExitBadInput;
      }
      if (o < 0 || o >= count) {
        err_ << "lh-gpucheck: --gpus: GPU " << o << " is not visible: the driver lists " << count
             << " GPU" << (count == 1 ? "" : "s") << " (0-" << count - 1 << ")"
             << VisibleDevicesNote() << "\n";
        return kExitBadInput;
      }
    }
    int result = CheckAll(ordinals);
    for (GpuReport& r : reports_) CloseGpu(*driver_, r.gpu);
    return result;
  }

 private:
  int NoDriver(const std::string& why) {
    err_ << "lh-gpucheck: " << why << "\n";
    events_.Message("error", StrCat("lh-gpucheck: ", why));
    return kExitNoDriver;
  }

  int CheckAll(const std::vector<int>& ordinals) {
    reports_.resize(ordinals.size());
    const size_t pairs = options_.p2p ? ordinals.size() * (ordinals.size() - 1) : 0;
    total_ = static_cast<double>(ordinals.size() * (options_.memory.patterns.size() + 1) + pairs);
    const std::vector<float> reference = BurnReference(options_.burn.rounds);
    // One thread per GPU: the GPUs are checked (and burnt) at the same time, as work would
    // load them. A context is current per thread, so each thread makes its own GPU's current.
    std::vector<std::thread> threads;
    for (size_t i = 0; i < ordinals.size(); ++i) {
      threads.emplace_back([this, &reference, i, ordinal = ordinals[i]] {
        GpuReport& r = reports_[i];
        if (Status st = OpenGpu(*driver_, ordinal, r.gpu); !st.ok()) {
          Fail(r, StrCat("open: ", st.message()));
          Advance(options_.memory.patterns.size() + 1);
          return;
        }
        CheckMemory(r);
        CheckBurn(r, reference);
      });
    }
    for (std::thread& t : threads) t.join();
    if (options_.p2p && ordinals.size() > 1) CheckPeers();
    int failed = 0;
    std::vector<std::string> failed_ordinals;
    for (const GpuReport& r : reports_) {
      Summarize(r);
      if (!r.failure.empty()) {
        ++failed;
        failed_ordinals.push_back(StrCat(r.gpu.ordinal));
      }
    }
    events_.Metric("gpucheck.failed_gpus", failed);
    events_.Output("failed_gpus", StrJoin(failed_ordinals, ","));
    if (!options_.report_path.empty()) {
      if (Status st = WriteReport(); !st.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        err_ << "lh-gpucheck: --report: " << st.message() << "\n";
        if (failed == 0) return kExitBadInput;  // a GPU's failure says more
      }
    }
    return failed > 0 ? kExitGpuFailed : kExitAllPassed;
  }

  // The JSON report: what each GPU's line says, in fields (docs/gpus.md).
  Status WriteReport() {
    nlohmann::json gpus = nlohmann::json::array();
    bool passed = true;
    for (const GpuReport& r : reports_) {
      passed = passed && r.failure.empty();
      nlohmann::json g = {
          {"ordinal", r.gpu.ordinal},
          {"uuid", r.gpu.uuid},
          {"name", r.gpu.name},
          {"passed", r.failure.empty()},
          {"failure", r.failure},
          {"memory",
           {{"bytes_tested", r.memory.bytes_tested},
            {"errors", r.memory.errors},
            {"seconds", r.memory.seconds}}},
          {"burn",
           {{"launches", r.burn.launches},
            {"gflops", r.burn.gflops},
            {"launches_per_s", r.burn.launches_per_s},
            {"wrong_results", r.burn.wrong}}},
          {"p2p_min_gbps", r.p2p_min_gbps ? nlohmann::json(*r.p2p_min_gbps) : nlohmann::json()}};
      gpus.push_back(std::move(g));
    }
    std::vector<std::string> patterns;
    for (Pattern p : options_.memory.patterns) patterns.push_back(PatternName(p));
    nlohmann::json report = {{"passed", passed},
                             {"memory_fraction", options_.memory.fraction},
                             {"patterns", patterns},
                             {"gpus", gpus}};
    std::string text = report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    text.push_back('\n');
    RETURN_IF_ERROR(WriteFileAtomic(options_.report_path, text));
    events_.Artifact("gpucheck_report", options_.report_path, static_cast<int64_t>(text.size()));
    return OkStatus();
  }

  void CheckMemory(GpuReport& r) {
    size_t done = 0;
    Status st = RunMemoryCheck(*driver_, r.gpu, options_.memory, r.memory, [&](Pattern) {
      ++done;
      Advance(1);
    });
    Advance(options_.memory.patterns.size() - done);
    events_.Metric("gpucheck.mem_errors", static_cast<double>(r.memory.errors), r.gpu.ordinal);
    if (!st.ok()) {
      Fail(r, StrCat("memory: ", st.message()));
    } else if (r.memory.errors > 0) {
      Fail(r, MemoryFailure(r.memory, options_.memory.patterns.size()));
    }
  }

  void CheckBurn(GpuReport& r, const std::vector<float>& reference) {
    if (!r.failure.empty()) {
      Advance(1);
      return;
    }
    Status st = RunBurnCheck(*driver_, r.gpu, options_.burn, reference, r.burn);
    Advance(1);
    events_.Metric("gpucheck.burn_gflops", r.burn.gflops, r.gpu.ordinal);
    if (!st.ok()) {
      Fail(r, StrCat("burn: ", st.message()));
    } else if (r.burn.wrong > 0) {
      Fail(r, BurnFailure(r.burn));
    }
  }

  // Every ordered pair of GPUs that passed their own checks; a pair with a GPU that failed
  // them is skipped (its failure is already reported). A pair's failure fails its source GPU,
  // so a link at fault fails both of its ends.
  void CheckPeers() {
    std::vector<bool> eligible;
    for (const GpuReport& r : reports_) eligible.push_back(r.failure.empty());
    for (size_t s = 0; s < reports_.size(); ++s) {
      for (size_t d = 0; d < reports_.size(); ++d) {
        if (s == d) continue;
        Advance(1);
        if (!eligible[s] || !eligible[d]) continue;
        GpuReport& src = reports_[s];
        const GpuReport& dst = reports_[d];
        P2pCheckOptions p2p = options_.p2p_options;
        p2p.seed = options_.memory.seed ^ (uint64_t(src.gpu.ordinal) << 32 | dst.gpu.ordinal);
        P2pCheckResult res;
        Status st = RunP2pCheck(*driver_, src.gpu, dst.gpu, p2p, res);
        std::string pair = StrCat("p2p to GPU ", dst.gpu.ordinal);
        if (!st.ok()) {
          Fail(src, StrCat(pair, ": ", st.message()));
        } else if (!res.peer_access) {
          Fail(src, StrCat(pair,
                           ": no peer access (cuDeviceCanAccessPeer says 0; run with "
                           "--no-p2p where the GPUs have no NVLink or P2P path)"));
        } else if (res.mismatches.count > 0) {
          Fail(src, StrCat(pair, ": ", res.mismatches.count, " wrong 32-bit words in the copy of ",
                           FormatBytes(options_.p2p_options.bytes), ", first at ",
                           DescribeMismatch(res.mismatches.first.front())));
        } else if (!src.p2p_min_gbps || res.gbps < *src.p2p_min_gbps) {
          src.p2p_min_gbps = res.gbps;
          src.p2p_slowest_peer = StrCat(dst.gpu.ordinal);
        }
      }
    }
    for (const GpuReport& r : reports_) {
      if (r.p2p_min_gbps) events_.Metric("gpucheck.p2p_gbps", *r.p2p_min_gbps, r.gpu.ordinal);
    }
  }

  void Fail(GpuReport& r, const std::string& failure) {
    if (!r.failure.empty()) return;  // the first failure is the one that counts
    r.failure = failure;
    std::string text = StrCat("lh-gpucheck: ", r.gpu.Label(), " failed ", failure);
    std::lock_guard<std::mutex> lock(mu_);
    err_ << text << "\n";
    events_.Message("error", text);
    // The coordinator takes the GPU out of service and ends the attempt as gpu_fault.
    events_.GpuFault(r.gpu.ordinal, r.gpu.uuid, StrCat("lh-gpucheck: ", failure));
  }

  void Advance(size_t units) {
    if (units == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    done_ += static_cast<double>(units);
    events_.Progress(done_, total_, "checks");
  }

  void Summarize(const GpuReport& r) {
    std::string line = StrCat("GPU ", r.gpu.ordinal, " ", r.gpu.uuid.empty() ? "-" : r.gpu.uuid,
                              " ", r.gpu.name.empty() ? "?" : r.gpu.name, ": ");
    line += r.failure.empty() ? "PASS" : "FAIL";
    line += StrCat("  memory ", FormatBytes(r.memory.bytes_tested), " x ",
                   options_.memory.patterns.size(),
                   options_.memory.patterns.size() == 1 ? " pattern, " : " patterns, ",
                   r.memory.errors, " errors");
    if (r.burn.launches > 0) {
      line += StrCat("  burn ", r.burn.launches, r.burn.launches == 1 ? " launch (" : " launches (",
                     FormatFixed(r.burn.launches_per_s, 1), "/s), ", FormatFixed(r.burn.gflops, 1),
                     " GFLOP/s");
    }
    if (r.p2p_min_gbps) {
      line += StrCat("  p2p min ", FormatFixed(*r.p2p_min_gbps, 1), " GB/s (to GPU ",
                     r.p2p_slowest_peer, ")");
    }
    if (!r.failure.empty()) line += StrCat("  failed ", r.failure);
    out_ << line << "\n";
  }

  const GpucheckOptions& options_;
  EventWriter& events_;
  std::ostream& out_;
  std::ostream& err_;
  std::unique_ptr<CudaDriver> driver_;
  std::vector<GpuReport> reports_;  // one per GPU; each written by its GPU's thread only
  std::mutex mu_;                   // guards err_ and done_
  double done_ = 0, total_ = 0;
};

}  // namespace

int RunGpucheck(const GpucheckOptions& options, EventWriter& events, std::ostream& out,
                std::ostream& err) {
  return GpucheckRun(options, events, out, err).Run();
}

}  // namespace longhaul::gpucheck
