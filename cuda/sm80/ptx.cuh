// The few sm_80 instructions the kernel is built from, as inline PTX: cp.async (global ->
// shared, 16 bytes, zero-filling out-of-range rows), ldmatrix (plain and transposed), the
// m16n8k16 tensor-core MMA with fp32 accumulation for bf16 and fp16, and the m16n8k8 f64 and
// TF32 ones of the f64/f32 forward (wide_math.cuh).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace kattn::cuda_kernels::sm80 {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte async copy; valid == false writes 16 zero bytes (src is not read).
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// d += a * b in f64 for a 16 x 8 x 8 tile (A row-major, B column-major): lane (g = lane / 4,
// t = lane % 4) holds A[g][t], A[g + 8][t], A[g][t + 4], A[g + 8][t + 4]; B[t][g], B[t + 4][g];
// D[g][2t], D[g][2t + 1], D[g + 8][2t], D[g + 8][2t + 1]. sm_90 has the shape as one
// instruction (PTX 7.8); sm_80's only f64 MMA is m8n8k4 (A[g][t], B[t][g], D[g][2t, 2t + 1]),
// four of which make the tile. On the H200 the m8n8k4 form kept the f64 tensor pipe 78-86% busy
// at 26 TFLOP/s (ncu): Hopper runs it at half the rate of the m16n8 shapes.
__device__ __forceinline__ void mma_f64_m16n8k8(double (&d)[4], const double (&a)[4],
                                                const double (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int k = 0; k < 2; ++k)
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, "
                   "{%0, %1};\n"
                   : "+d"(d[2 * h]), "+d"(d[2 * h + 1])
                   : "d"(a[h + 2 * k]), "d"(b[k])); // A[g + 8h][t + 4k]
#endif
}

// d += a * b for a 16 x 8 x 8 tile with TF32 inputs and fp32 accumulators (the fragment layout
// of mma_f64_m16n8k8 above, 32-bit registers; the MMA reads the top 19 bits of each input).
__device__ __forceinline__ void mma_tf32_m16n8k8(float (&d)[4], const std::uint32_t (&a)[4],
                                                 const std::uint32_t (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// x rounded to TF32 (to nearest, ties away), as the bits of an fp32 value.
__device__ __forceinline__ std::uint32_t to_tf32(float x) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// Per element type: the MMA and the fp32 pair -> packed 2 x 16-bit conversion.
template <class Elem>
struct ElemOps;

template <>
struct ElemOps<__nv_bfloat16> {
  static constexpr const char* name = "bf16";
  __device__ __forceinline__ static std::uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
  // d += a * b (m16n8k16, A row-major, B column-major, fp32 accumulators).
  __device__ __forceinline__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],
                                             std::uint32_t b0, std::uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <>
struct ElemOps<__half> {
  static constexpr const char* name = "f16";
  __device__ __forceinline__ static std::uint32_t pack(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
  __device__ __forceinline__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],
                                             std::uint32_t b0, std::uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

} // namespace kattn::cuda_kernels::sm80
