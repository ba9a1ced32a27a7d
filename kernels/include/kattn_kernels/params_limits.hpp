// Limits on FlashFwdParams that more than one kernel family states, each written once (host
// code): a family's support check calls the ones it has, with its own numbers, and adds its own
// (head dims, shared memory, TMA strides). Each returns the reason, or "" when the params pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "kattn_kernels/flash_bwd_params.hpp"
#include "kattn_kernels/flash_params.hpp"

namespace kattn {

inline const char* elem_name(ElemType t) {
  switch (t) {
  case ElemType::bf16:
    return "bf16";
  case ElemType::f16:
    return "f16";
  case ElemType::f32:
    return "f32";
  case ElemType::f64:
    return "f64";
  }
  return "?";
}

// The 16-bit element types, which every family's tensor-core kernels take; `who` names the
// kernels (sm80's f64 forward is the one kernel that takes another: sm80_fwd.cu).
inline std::string half_dtype_limit(const FlashFwdParams& p, const char* who) {
  if (p.dtype == ElemType::bf16 || p.dtype == ElemType::f16)
    return {};
  return std::string("dtype: expected bf16 or f16 (") + who + "), got " + elem_name(p.dtype);
}

// Query heads in groups of key/value heads: N > 0, K > 0, K divides N.
inline std::string heads_limit(const FlashFwdParams& p) {
  if (p.N > 0 && p.K > 0 && p.N % p.K == 0)
    return {};
  return "heads: expected N > 0, K > 0 and K dividing N, got N=" + std::to_string(p.N) +
         " K=" + std::to_string(p.K);
}

// Packed varlen needs both offset arrays, and is not combined with padded lengths.
inline std::string varlen_limit(const FlashFwdParams& p) {
  if ((p.cu_seqlens_q == nullptr) != (p.cu_seqlens_k == nullptr))
    return "packed varlen: expected both cu_seqlens_q and cu_seqlens_k, or neither";
  if (p.cu_seqlens_q != nullptr && (p.seqlens_q != nullptr || p.seqlens_k != nullptr))
    return "varlen: expected packed (cu_seqlens) or padded (seqlens), not both";
  return {};
}

// A paged KV cache is read by the decode kernel only (cuda/decode/); `who` names the kernels
// that refuse it.
inline std::string paged_limit(const FlashFwdParams& p, const char* who) {
  if (p.page_table == nullptr)
    return {};
  return std::string("paged KV cache (extras.page_table): not read by ") + who +
         " (the decode kernel serves it)";
}

// One block per (query block, head, batch): gridDim.y and .z are at most 65535.
// Every side non-empty: a zero-sized grid is a launch error (the backends refuse empty sides
// before any kernel is asked; this keeps a direct caller of a family's backward from one).
inline std::string sizes_limit(const FlashFwdParams& p) {
  if (p.B > 0 && p.N > 0 && p.T > 0 && p.S > 0)
    return {};
  return "sizes: expected B, N, T and S > 0, got B=" + std::to_string(p.B) +
         " N=" + std::to_string(p.N) + " T=" + std::to_string(p.T) + " S=" + std::to_string(p.S);
}

inline std::string grid_limit(const FlashFwdParams& p) {
  if (p.B <= 65535 && p.N <= 65535)
    return {};
  return "grid: expected B and N <= 65535, got B=" + std::to_string(p.B) +
         " N=" + std::to_string(p.N);
}

// The stride between the rows a kernel walks over a tensor's contiguous dimension: the row
// (token) stride, or for a sequence-major tensor (head-dim stride != 1) the head-dim stride.
inline std::int64_t outer_stride(std::int64_t row_stride, std::int64_t dim_stride) {
  return dim_stride == 1 ? row_stride : dim_stride;
}

// q, k and v with head-dim stride 1 (not sequence-major: only sm90 reads that layout).
inline std::string unit_dim_stride_limit(const FlashFwdParams& p) {
  const std::pair<const char*, std::int64_t> dims[] = {
      {"q", p.q_dim_stride}, {"k", p.k_dim_stride}, {"v", p.v_dim_stride}};
  for (const auto& [name, s] : dims)
    if (s != 1)
      return std::string(name) + ": expected head-dim stride 1, got " + std::to_string(s) +
             " (sequence-major q, k, v: the sm90 kernels only)";
  return {};
}

// q, k, v and out aligned to `bytes`, their batch/row/head strides (sequence-major: batch/dim/
// head) multiples of `elems` elements (`why`: the access that needs it, e.g. "16-byte loads"). A
// null pointer passes: it is a tensor not placed yet, as in the support query for row-major layout
// copies (kokkosattn/layout_copies.hpp: the front end's scratch is 256-byte aligned); validation
// refuses null data for tensors with elements before any kernel runs.
inline std::string access_limit(const FlashFwdParams& p, std::size_t bytes, std::int64_t elems,
                                const char* why) {
  const std::pair<const char*, const void*> ptrs[] = {
      {"q", p.q}, {"k", p.k}, {"v", p.v}, {"out", p.out}};
  for (const auto& [name, ptr] : ptrs)
    if (reinterpret_cast<std::uintptr_t>(ptr) % bytes != 0)
      return std::string(name) + ": expected a " + std::to_string(bytes) +
             "-byte aligned device pointer (" + why + ")";
  const std::int64_t strides[] = {p.q_batch_stride,
                                  outer_stride(p.q_row_stride, p.q_dim_stride),
                                  p.q_head_stride,
                                  p.k_batch_stride,
                                  outer_stride(p.k_row_stride, p.k_dim_stride),
                                  p.k_head_stride,
                                  p.v_batch_stride,
                                  outer_stride(p.v_row_stride, p.v_dim_stride),
                                  p.v_head_stride,
                                  p.o_batch_stride,
                                  p.o_row_stride,
                                  p.o_head_stride};
  for (std::int64_t s : strides)
    if (s % elems != 0)
      return "strides: expected q, k, v and out batch/row/head strides that are multiples of " +
             std::to_string(elems) + " elements (" + why + "), got " + std::to_string(s);
  return {};
}

// The backward's own tensors (dout, dq, dk, dv) under the rule of access_limit, and the
// forward's LSE, which the backward kernels read.
inline std::string bwd_access_limit(const FlashBwdParams& p, std::size_t bytes, std::int64_t elems,
                                    const char* why) {
  if (p.fwd.lse == nullptr)
    return "extras.lse: expected the forward's LSE (the backward kernels recompute P from it)";
  const std::pair<const char*, const void*> ptrs[] = {
      {"dout", p.dout}, {"dq", p.dq}, {"dk", p.dk}, {"dv", p.dv}};
  for (const auto& [name, ptr] : ptrs)
    if (reinterpret_cast<std::uintptr_t>(ptr) % bytes != 0)
      return std::string(name) + ": expected a " + std::to_string(bytes) +
             "-byte aligned device pointer (" + why + ")";
  const std::int64_t strides[] = {p.do_batch_stride, p.do_row_stride, p.do_head_stride,
                                  p.dq_batch_stride, p.dq_row_stride, p.dq_head_stride,
                                  p.dk_batch_stride, p.dk_row_stride, p.dk_head_stride,
                                  p.dv_batch_stride, p.dv_row_stride, p.dv_head_stride};
  for (std::int64_t s : strides)
    if (s % elems != 0)
      return "strides: expected dout, dq, dk and dv batch/row/head strides that are multiples of " +
             std::to_string(elems) + " elements (" + why + "), got " + std::to_string(s);
  return {};
}

} // namespace kattn
