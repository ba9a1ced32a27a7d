# Generates cuda/sm90/wgmma_ops.cuh (then clang-format it); the generated file is committed.
# Usage: python3 cuda/sm90/generate_wgmma_ops.py
import os
def regs(a, b): return ", ".join(f"%{i}" for i in range(a, b))
out = []
out.append('''// wgmma.mma_async wrappers for the shapes the sm90 forward uses (fp32 accumulators). Generated
// by generate_wgmma_ops.py (then clang-formatted): change the generator, not this file.
// Accumulator layout (m64nN): thread t of the warpgroup owns rows 16*(t/32) + (t%32)/4 (+8) and
// columns 8*j + 2*(t%4) + {0,1}; d[4j+0..1] row r, d[4j+2..3] row r+8. Written out in full
// because inline asm cannot loop over operands.
#pragma once

#include <cstdint>

namespace kattn::cuda_kernels::sm90 {

// D (+)= A * B^T, A and B in shared memory (descriptors): K-major, or with kMnMajor both
// MN-major ("transposed": sequence-major tiles). scale_d == 0 overwrites D.
template <int N, bool kBf16, bool kMnMajor = false> struct WgmmaSS;
// D (+)= A * B, A from registers (4 x b32 per k16 step), B in shared memory: N-major
// ("transposed", kBTransposed), or K-major for sequence-major V.
template <int N, bool kBf16, bool kBTransposed = true> struct WgmmaRS;
// The fp32 forward's TF32 products (m64nNk8, sm90/f32_mainloop.cuh): both operands K-major, the
// only layout .tf32 has (no transpose immediates). SS: A and B by descriptor; RS: A from
// registers, 4 x b32 per k8 step: (row g, k t), (g + 8, t), (g, t + 4), (g + 8, t + 4) with
// g = lane / 4 + 16 warp, t = lane % 4. The small part of a 3xTF32 split is passed as is: the
// MMA reads its top 19 bits.
template <int N> struct WgmmaSSTf32;
template <int N> struct WgmmaRSTf32;
''')
# S = Q K^T uses N = key block (128; 80 for head dim 256), P V uses N = head dim (64, 128, 256);
# 160, 176 and 192 are the key blocks of the h128/h64 variants measured in docs/cuda-sm90.md.
# The sequence-major tiles (head dims 64 and 128, key blocks 128 and 192, tail 64) add MN-major
# S = Q K^T and K-major P V.
SS = [(n, False) for n in (64, 80, 128, 160, 176, 192, 256)] + [(n, True) for n in (64, 128, 192)]
RS = [(n, True) for n in (64, 80, 128, 160, 176, 192, 256)] + [(n, False) for n in (64, 128)]
def tf(b): return "true" if b else "false"
# One specialisation of WgmmaSS / WgmmaRS: `spec` its template arguments, `shape` m64nNkK,
# `t` the operand type, `imm` the immediates after scale-d (scale-a, scale-b and any transposes).
def ss_struct(spec, n, shape, t, imm):
    nd = n // 2
    dl = ", ".join(f'"+f"(d[{i}])' for i in range(nd))
    asm = (f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nd+2}, 0;\\n"\n'
           f'                 "wgmma.mma_async.sync.aligned.{shape}.f32.{t}.{t} "\n'
           f'                 "{{{regs(0, nd)}}}, %{nd}, %{nd+1}, p, {imm};\\n}}\\n"')
    return f'''template <> struct {spec} {{
  static __device__ __forceinline__ void run(float (&d)[{nd}], std::uint64_t da, std::uint64_t db,
                                             int scale_d) {{
    asm volatile({asm}
                 : {dl}
                 : "l"(da), "l"(db), "r"(scale_d));
  }}
  // D = A * B^T with D write-only: no false dependency on D's old values.
  static __device__ __forceinline__ void run_zero(float (&d)[{nd}], std::uint64_t da,
                                                  std::uint64_t db) {{
    asm volatile({asm}
                 : {dl.replace('"+f"', '"=f"')}
                 : "l"(da), "l"(db), "r"(0));
  }}
}};
'''
def rs_struct(spec, n, shape, t, imm):
    nd = n // 2
    dl = ", ".join(f'"+f"(d[{i}])' for i in range(nd))
    return f'''template <> struct {spec} {{
  static __device__ __forceinline__ void run(float (&d)[{nd}], const std::uint32_t (&a)[4],
                                             std::uint64_t db, int scale_d) {{
    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nd+5}, 0;\\n"
                 "wgmma.mma_async.sync.aligned.{shape}.f32.{t}.{t} "
                 "{{{regs(0, nd)}}}, {{%{nd}, %{nd+1}, %{nd+2}, %{nd+3}}}, %{nd+4}, p, {imm};\\n}}\\n"
                 : {dl}
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
  }}
}};
'''
for n, mn in SS:
    for bf in (True, False):
        tn = 1 if mn else 0
        out.append(ss_struct(f"WgmmaSS<{n}, {tf(bf)}, {tf(mn)}>", n, f"m64n{n}k16",
                             "bf16" if bf else "f16", f"1, 1, {tn}, {tn}"))
for n, tb in RS:
    for bf in (True, False):
        out.append(rs_struct(f"WgmmaRS<{n}, {tf(bf)}, {tf(tb)}>", n, f"m64n{n}k16",
                             "bf16" if bf else "f16", f"1, 1, {1 if tb else 0}"))
# The fp32 forward: S over 32-key blocks, P V over head dim 128.
out.append(ss_struct("WgmmaSSTf32<32>", 32, "m64n32k8", "tf32", "1, 1"))
out.append(rs_struct("WgmmaRSTf32<128>", 128, "m64n128k8", "tf32", "1, 1"))
out.append("} // namespace kattn::cuda_kernels::sm90\n")
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "wgmma_ops.cuh"), "w").write("\n".join(out))
