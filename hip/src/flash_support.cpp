// What the HIP forward kernels serve, decided on the params alone (shared by both builds).
#include <cstdint>
#include <string>

#include "kattn_hip/flash_fwd.hpp"

namespace kattn::hip_kernels {
namespace {

bool aligned8(const void* ptr) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 8 == 0;
}

FlashSupport no(std::string why) {
  return {false, std::move(why)};
}

} // namespace

FlashSupport supports(const FlashFwdParams& p) {
  if (p.dtype != ElemType::bf16 && p.dtype != ElemType::f16)
    return no("dtype: expected bf16 or f16");
  if (p.H != p.Hv || (p.H != 64 && p.H != 128))
    return no("head dims: expected H == Hv in {64, 128}, got H=" + std::to_string(p.H) +
              " Hv=" + std::to_string(p.Hv));
  if (!p.q || !p.k || !p.v || !p.out)
    return no("q, k, v, out: expected device pointers, got a null pointer");
  const std::pair<const char*, const void*> ptrs[] = {
      {"q", p.q}, {"k", p.k}, {"v", p.v}, {"out", p.out}};
  for (const auto& [name, ptr] : ptrs)
    if (!aligned8(ptr))
      return no(std::string(name) + ": expected an 8-byte aligned pointer (64-bit loads)");
  const std::int64_t strides[] = {p.q_batch_stride, p.q_row_stride, p.q_head_stride,
                                  p.k_batch_stride, p.k_row_stride, p.k_head_stride,
                                  p.v_batch_stride, p.v_row_stride, p.v_head_stride,
                                  p.o_batch_stride, p.o_row_stride, p.o_head_stride};
  for (std::int64_t s : strides)
    if (s % 4 != 0)
      return no("strides: expected batch/row/head strides that are multiples of 4 elements "
                "(64-bit loads), got " +
                std::to_string(s));
  if (p.B < 0 || p.T < 0 || p.S < 0 || p.N <= 0 || p.K <= 0 || p.N % p.K != 0)
    return no("heads: expected N > 0, K > 0 and K dividing N, got N=" + std::to_string(p.N) +
              " K=" + std::to_string(p.K));
  if (p.B > 65535 || p.N > 65535)
    return no("grid: expected B and N <= 65535, got B=" + std::to_string(p.B) +
              " N=" + std::to_string(p.N));
  if ((p.cu_seqlens_q == nullptr) != (p.cu_seqlens_k == nullptr))
    return no("packed varlen: expected both cu_seqlens_q and cu_seqlens_k, or neither");
  if (p.cu_seqlens_q && (p.seqlens_q || p.seqlens_k))
    return no("varlen: expected packed (cu_seqlens) or padded (seqlens), not both");
  if (!(p.scale > 0.f) || p.softcap < 0.f)
    return no("scale: expected > 0 and softcap >= 0");
  return {true, {}};
}

std::string kernel_name(const FlashFwdParams& p, bool mfma) {
  return std::string(mfma ? "hip_mfma_fwd_" : "hip_generic_fwd_") +
         (p.dtype == ElemType::bf16 ? "bf16" : "f16") + "_h" + std::to_string(p.H);
}

} // namespace kattn::hip_kernels
