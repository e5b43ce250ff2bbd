#include "stages/gpucheck/gpu_checks.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/strings.h"
#include "stages/gpucheck/burn_kernel.h"

namespace longhaul::gpucheck {
namespace {

using GpucheckClock = std::chrono::steady_clock;

double SecondsSince(GpucheckClock::time_point start) {
  return std::chrono::duration<double>(GpucheckClock::now() - start).count();
}

size_t ChunkWords(uint64_t chunk_bytes, uint64_t buffer_bytes) {
  return static_cast<size_t>(std::max<uint64_t>(1, std::min(chunk_bytes, buffer_bytes) / 4));
}

// Loads the burn kernel into the current context; unloads it when destroyed.
class BurnModule {
 public:
  explicit BurnModule(const CudaDriver& driver) : driver_(driver) {}
  ~BurnModule() {
    if (module_ != nullptr) driver_.api().ModuleUnload(module_);
  }
  Result<CUfunction> Load() {
    RETURN_IF_ERROR(driver_.Check(driver_.api().ModuleLoadData(&module_, BurnKernelPtx()),
                                  "cuModuleLoadData of the burn kernel's PTX"));
    CUfunction f = nullptr;
    RETURN_IF_ERROR(driver_.Check(driver_.api().ModuleGetFunction(&f, module_, kBurnKernelName),
                                  StrCat("cuModuleGetFunction ", kBurnKernelName)));
    return f;
  }

 private:
  const CudaDriver& driver_;
  CUmodule module_ = nullptr;
};

}  // namespace

Status RunMemoryCheck(const CudaDriver& driver, const GpuHandle& gpu,
                      const MemoryCheckOptions& options, MemoryCheckResult& result,
                      const std::function<void(Pattern)>& pattern_done) {
  const CudaApi& api = driver.api();
  auto start = GpucheckClock::now();
  RETURN_IF_ERROR(driver.Check(api.CtxSetCurrent(gpu.ctx), "cuCtxSetCurrent"));
  size_t free_bytes = 0, total_bytes = 0;
  RETURN_IF_ERROR(driver.Check(api.MemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo_v2"));
  uint64_t bytes = static_cast<uint64_t>(static_cast<double>(free_bytes) * options.fraction);
  bytes -= bytes % 4;
  if (bytes == 0) {
    return absl::ResourceExhaustedError(StrCat(
        "no memory to test: ", free_bytes, " bytes free, --memory-fraction ", options.fraction));
  }
  ASSIGN_OR_RETURN(DeviceBuffer buf, DeviceBuffer::Allocate(driver, gpu.ctx, bytes));
  result.bytes_tested = bytes;
  HostChunks host(ChunkWords(options.chunk_bytes, bytes));
  for (Pattern p : options.patterns) {
    RETURN_IF_ERROR(Annotate(WritePattern(driver, buf, p, options.seed, host),
                             StrCat("pattern ", PatternName(p))));
    MismatchSummary summary;
    RETURN_IF_ERROR(Annotate(VerifyPattern(driver, buf, p, options.seed, host, summary),
                             StrCat("pattern ", PatternName(p))));
    if (summary.count > 0 && result.errors == 0) {
      result.failed_pattern = p;
      result.first_failed = summary;
    }
    result.errors += summary.count;
    pattern_done(p);
  }
  result.seconds = SecondsSince(start);
  return OkStatus();
}

Status RunBurnCheck(const CudaDriver& driver, const GpuHandle& gpu, const BurnCheckOptions& options,
                    const std::vector<float>& reference, BurnCheckResult& result) {
  const CudaApi& api = driver.api();
  RETURN_IF_ERROR(driver.Check(api.CtxSetCurrent(gpu.ctx), "cuCtxSetCurrent"));
  BurnModule module(driver);
  ASSIGN_OR_RETURN(CUfunction kernel, module.Load());
  const uint32_t n = options.threads;
  ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Allocate(driver, gpu.ctx, uint64_t{n} * 4));
  std::vector<float> host(n);
  constexpr unsigned int kBlock = 256;
  const unsigned int grid = (n + kBlock - 1) / kBlock;
  CUdeviceptr out_ptr = out.ptr();
  uint32_t rounds = options.rounds;
  float a = kBurnA, b = kBurnB;
  uint32_t count = n;
  void* params[] = {&out_ptr, &count, &rounds, &a, &b};
  auto deadline = GpucheckClock::now() + std::chrono::duration_cast<GpucheckClock::duration>(
                                             std::chrono::duration<double>(options.seconds));
  while (options.launches > 0 ? result.launches < options.launches
                              : result.launches == 0 || GpucheckClock::now() < deadline) {
    // NaN everywhere first: a launch that stores nothing cannot pass on the last one's results.
    RETURN_IF_ERROR(driver.Check(api.MemsetD32(out.ptr(), 0xffffffffu, n), "cuMemsetD32_v2"));
    RETURN_IF_ERROR(driver.Check(api.CtxSynchronize(), "cuCtxSynchronize"));
    auto t0 = GpucheckClock::now();
    RETURN_IF_ERROR(driver.Check(
        api.LaunchKernel(kernel, grid, 1, 1, kBlock, 1, 1, 0, nullptr, params, nullptr),
        StrCat("cuLaunchKernel ", kBurnKernelName)));
    RETURN_IF_ERROR(
        driver.Check(api.CtxSynchronize(), StrCat("cuCtxSynchronize after ", kBurnKernelName)));
    result.kernel_seconds += SecondsSince(t0);
    ++result.launches;
    RETURN_IF_ERROR(
        driver.Check(api.MemcpyDtoH(host.data(), out.ptr(), uint64_t{n} * 4), "cuMemcpyDtoH_v2"));
    for (uint32_t i = 0; i < n; ++i) {
      const float want = reference[i % kBurnDistinctStarts];
      if (std::memcmp(&host[i], &want, sizeof want) == 0) continue;
      if (result.wrong++ == 0) {
        result.first_wrong_thread = i;
        result.expected = want;
        result.got = host[i];
      }
    }
    if (result.wrong > 0) break;
  }
  if (result.kernel_seconds > 0) {
    double flops =
        2.0 * kBurnFmasPerRound * options.rounds * static_cast<double>(n) * result.launches;
    result.gflops = flops / result.kernel_seconds / 1e9;
    result.launches_per_s = result.launches / result.kernel_seconds;
  }
  return OkStatus();
}

Status RunP2pCheck(const CudaDriver& driver, const GpuHandle& src, const GpuHandle& dst,
                   const P2pCheckOptions& options, P2pCheckResult& result) {
  const CudaApi& api = driver.api();
  int can = 0;
  RETURN_IF_ERROR(
      driver.Check(api.DeviceCanAccessPeer(&can, src.device, dst.device), "cuDeviceCanAccessPeer"));
  result.peer_access = can != 0;
  if (!result.peer_access) return OkStatus();
  RETURN_IF_ERROR(driver.Check(api.CtxSetCurrent(src.ctx), "cuCtxSetCurrent"));
  CUresult enabled = api.CtxEnablePeerAccess(dst.ctx, 0);
  if (enabled != kCudaErrorPeerAccessAlreadyEnabled) {
    RETURN_IF_ERROR(driver.Check(enabled, "cuCtxEnablePeerAccess"));
  }
  const uint64_t bytes = options.bytes - options.bytes % 4;
  ASSIGN_OR_RETURN(DeviceBuffer from, DeviceBuffer::Allocate(driver, src.ctx, bytes));
  ASSIGN_OR_RETURN(DeviceBuffer to, DeviceBuffer::Allocate(driver, dst.ctx, bytes));
  HostChunks host(ChunkWords(options.chunk_bytes, bytes));
  // The destination starts as all ones, so a copy that moved nothing is seen.
  RETURN_IF_ERROR(WritePattern(driver, to, Pattern::kOnes, options.seed, host));
  RETURN_IF_ERROR(driver.Check(api.CtxSetCurrent(src.ctx), "cuCtxSetCurrent"));
  RETURN_IF_ERROR(WritePattern(driver, from, Pattern::kRandom, options.seed, host));
  // A copy between devices may return before it is done: both contexts are synchronized
  // before the clock is read. The first copy (peer mappings set up) is not timed.
  auto copy = [&]() {
    return driver.Check(api.MemcpyPeer(to.ptr(), dst.ctx, from.ptr(), src.ctx, bytes),
                        "cuMemcpyPeer");
  };
  auto sync_both = [&]() -> Status {
    for (CUcontext ctx : {dst.ctx, src.ctx}) {
      RETURN_IF_ERROR(driver.Check(api.CtxSetCurrent(ctx), "cuCtxSetCurrent"));
      RETURN_IF_ERROR(driver.Check(api.CtxSynchronize(), "cuCtxSynchronize after cuMemcpyPeer"));
    }
    return OkStatus();
  };
  RETURN_IF_ERROR(copy());
  RETURN_IF_ERROR(sync_both());
  const int copies = std::max(1, options.copies);
  auto start = GpucheckClock::now();
  for (int i = 0; i < copies; ++i) RETURN_IF_ERROR(copy());
  RETURN_IF_ERROR(sync_both());
  double seconds = SecondsSince(start);
  if (seconds > 0) result.gbps = static_cast<double>(bytes) * copies / seconds / 1e9;
  RETURN_IF_ERROR(driver.Check(api.CtxSetCurrent(dst.ctx), "cuCtxSetCurrent"));
  return VerifyPattern(driver, to, Pattern::kRandom, options.seed, host, result.mismatches);
}

}  // namespace longhaul::gpucheck
