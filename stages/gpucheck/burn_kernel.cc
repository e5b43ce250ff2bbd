#include "stages/gpucheck/burn_kernel.h"

#include <cmath>

namespace longhaul::gpucheck {
namespace {

// PTX ISA 6.0 (CUDA 9) for sm_50: every driver that runs an H100/H200 JITs it. The loop body is
// 8 dependent FMAs; the thread count, not the chain, keeps the GPU busy.
constexpr char kBurnPtx[] = R"PTX(
.version 6.0
.target sm_50
.address_size 64

.visible .entry lh_gpucheck_fma(
    .param .u64 out,
    .param .u32 n,
    .param .u32 rounds,
    .param .f32 a,
    .param .f32 b
)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<4>;

    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    ld.param.u32 %r2, [rounds];
    ld.param.f32 %f2, [a];
    ld.param.f32 %f3, [b];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.u32 %r6, %r3, %r4, %r5;
    setp.ge.u32 %p1, %r6, %r1;
    @%p1 bra DONE;
    and.b32 %r7, %r6, 1023;
    cvt.rn.f32.u32 %f1, %r7;
    mul.rn.f32 %f1, %f1, 0f3A800000;
    setp.eq.u32 %p2, %r2, 0;
    @%p2 bra STORE;
LOOP:
    fma.rn.f32 %f1, %f1, %f2, %f3;
    fma.rn.f32 %f1, %f1, %f2, %f3;
    fma.rn.f32 %f1, %f1, %f2, %f3;
    fma.rn.f32 %f1, %f1, %f2, %f3;
    fma.rn.f32 %f1, %f1, %f2, %f3;
    fma.rn.f32 %f1, %f1, %f2, %f3;
    fma.rn.f32 %f1, %f1, %f2, %f3;
    fma.rn.f32 %f1, %f1, %f2, %f3;
    sub.u32 %r2, %r2, 1;
    setp.ne.u32 %p2, %r2, 0;
    @%p2 bra LOOP;
STORE:
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r6, 4;
    add.u64 %rd2, %rd2, %rd3;
    st.global.f32 [%rd2], %f1;
DONE:
    ret;
}
)PTX";

}  // namespace

const char* BurnKernelPtx() { return kBurnPtx; }

std::vector<float> BurnReference(uint32_t rounds) {
  std::vector<float> ref(kBurnDistinctStarts);
  for (uint32_t s = 0; s < kBurnDistinctStarts; ++s) {
    float x = static_cast<float>(s) * 0x1p-10f;  // exact, as the PTX's cvt and mul
    for (uint32_t r = 0; r < rounds; ++r) {
      for (int k = 0; k < kBurnFmasPerRound; ++k) x = std::fmaf(x, kBurnA, kBurnB);
    }
    ref[s] = x;
  }
  return ref;
}

}  // namespace longhaul::gpucheck
