// Thin wrappers over the sm_90 PTX the kernels need: mbarriers, TMA tile loads and reductions,
// wgmma fences and shared-memory matrix descriptors, register reallocation, named barriers.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace kattn::cuda_kernels::sm90 {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier ----------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Blocks until the phase with the given parity has completed. A fresh barrier counts its
// "previous" phase (parity 1) as complete, so producers start waiting on parity 1.
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  asm volatile("{\n"
               ".reg .pred done;\n"
               "WAIT_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra WAIT_%=;\n"
               "}\n" ::"r"(bar),
               "r"(parity)
               : "memory");
}
// Orders this thread's generic-proxy shared-memory writes before async-proxy (wgmma/TMA) reads.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Orders this thread's generic-proxy global-memory accesses with its async-proxy (bulk) ones.
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}
// A flag between CTAs: spin until *flag == value (acquire: what its writer released before is
// visible after), and release-add to it.
__device__ __forceinline__ void wait_flag_eq(const std::int32_t* flag, std::int32_t value) {
  std::int32_t v;
  do {
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
  } while (v != value);
}
__device__ __forceinline__ void release_flag_add(std::int32_t* flag, std::int32_t value) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// ---- TMA ---------------------------------------------------------------------------------
// 4-d tiled load (coordinates innermost first) completing on `bar` with its byte count.
__device__ __forceinline__ void tma_load_4d(std::uint32_t dst, const CUtensorMap* map,
                                            std::uint32_t bar, int c0, int c1, int c2, int c3) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(dst),
               "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2),
               "r"(c3)
               : "memory");
}
// 4-d tiled reduction: adds the shared-memory box at `src` into the tensor (f32 add), completing
// in the thread's bulk async-group.
__device__ __forceinline__ void tma_reduce_add_4d(const CUtensorMap* map, std::uint32_t src, int c0,
                                                  int c1, int c2, int c3) {
  asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.bulk_group"
               " [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
// 1-D bulk reduction: adds `bytes` (a multiple of 16) of f32 at `src` into global memory at
// `dst` (both 16-byte aligned) with an L2 EVICT_LAST hint, completing in the thread's bulk
// async-group.
__device__ __forceinline__ void bulk_reduce_add_f32_evict_last(float* dst, std::uint32_t src,
                                                               std::uint32_t bytes) {
  std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.add.f32"
               " [%0], [%1], %2, %3;\n" ::"l"(dst),
               "r"(src), "r"(bytes), "l"(policy)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Waits until at most N of the thread's bulk groups still read their shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Waits until at most N of the thread's bulk groups are incomplete.
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void prefetch_tma_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// ---- wgmma -------------------------------------------------------------------------------
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads/writes across a wgmma wait.
template <int N>
__device__ __forceinline__ void reg_fence(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    asm volatile("" : "+f"(r[i])::"memory");
  }
}

template <int N>
__device__ __forceinline__ void reg_fence(std::uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    asm volatile("" : "+r"(r[i])::"memory");
  }
}

// Descriptor of a 128-byte-swizzled tile (the layout TMA writes with SWIZZLE_128B): rows of
// 128 bytes in 1024-byte groups of 8. lbo: bytes between 64-element column blocks (N-major
// operands only; unused for K-major); sbo: bytes between 8-row groups.
__device__ __forceinline__ std::uint64_t sw128_desc(std::uint32_t addr, std::uint32_t lbo,
                                                    std::uint32_t sbo) {
  std::uint64_t d = 0;
  d |= static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4);
  d |= static_cast<std::uint64_t>((lbo >> 4) & 0x3FFF) << 16;
  d |= static_cast<std::uint64_t>((sbo >> 4) & 0x3FFF) << 32;
  d |= static_cast<std::uint64_t>(1) << 62; // 128-byte swizzle
  return d;
}

// Descriptor d advanced by `bytes` (a multiple of 16): one 32-bit add on the start-address
// field, which cannot carry out because shared-memory addresses stay below 2^18.
__device__ __forceinline__ std::uint64_t desc_advance(std::uint64_t d, std::uint32_t bytes) {
  const std::uint32_t lo = static_cast<std::uint32_t>(d) + (bytes >> 4);
  return (d & 0xFFFFFFFF00000000ull) | lo;
}

// ---- warp specialisation -----------------------------------------------------------------
// Registers a CTA of `threads` threads holds under __launch_bounds__(threads, 1): 64K per thread
// count, rounded down to a multiple of 8 per thread. setmaxnreg only moves registers within
// that pool: an increase that the decreases do not pay for waits forever.
constexpr int launch_register_pool(int threads) {
  return 65536 / threads / 8 * 8 * threads;
}
template <int R>
__device__ __forceinline__ void regs_dealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void regs_alloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
__device__ __forceinline__ void named_bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ std::uint32_t pack2(float lo, float hi, bool bf16) {
  std::uint32_t r;
  if (bf16) {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  } else {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  }
  return r;
}

__device__ __forceinline__ float exp2_approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float tanh_approx(float x) {
  float r;
  asm("tanh.approx.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
}

} // namespace kattn::cuda_kernels::sm90
