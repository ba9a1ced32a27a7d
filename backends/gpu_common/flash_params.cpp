#include "gpu_common/flash_params.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "kokkosattn/detail/empty_sides.hpp"
#include "kokkosattn/detail/float_scale.hpp"

namespace kattn {
namespace {

std::string str(std::string_view s) {
  return std::string(s);
}

// [batch, row, head] strides of q/k/v/out: batched [B, L, heads, dim], packed [L, heads, dim]
// (batch stride 0, which seq_geometry.hpp's offsets rely on). The batch and head strides of an
// extent-1 dimension are never used and given as 0, so that no family's stride check refuses
// them: Kokkos' LayoutLeft has batch stride 1 at B = 1.
void strides_of(const Tensor& t, bool packed, std::int64_t& batch, std::int64_t& row,
                std::int64_t& head) {
  const std::size_t o = packed ? 0 : 1;
  const auto used = [&](std::size_t d) { return t.extent[d] > 1 ? t.stride[d] : 0; };
  batch = packed ? 0 : used(0);
  row = t.stride[o];
  head = used(o + 1);
}

// The kernels' element type of a dtype, or none for one no kernel family takes (FP8: cudnn's).
std::optional<ElemType> elem_type(DType t) {
  switch (t) {
  case DType::bf16:
    return ElemType::bf16;
  case DType::f16:
    return ElemType::f16;
  case DType::f32:
    return ElemType::f32;
  case DType::f64:
    return ElemType::f64;
  default:
    return std::nullopt;
  }
}

// Which of our GPU kernels' tensors a tensor is: q, k or v (which may instead be sequence-major,
// row stride 1: the sm90 family reads them so, the others refuse them: unit_dim_stride_limit),
// out, or a backward's dout, dq, dk or dv (whose dtype must be q's, already found a float type).
enum class Role { input, out, gradient };

// Why tensor `name` does not suit our GPU kernels, or empty: it must live in `memory`, hold q's
// `dtype` (bf16, f16, f32 or f64: which of them a kernel takes is its family's check,
// params_limits.hpp's half_dtype_limit) and have head-dim stride 1 (an input: or stride 1 along
// `row_dim`, its row dimension).
std::string tensor_refusal(const char* name, const Tensor& t, Role role, MemorySpace memory,
                           DType dtype, std::size_t row_dim) {
  if (t.space != memory)
    return std::string(name) + ": expected " + str(to_string(memory)) + " memory, got " +
           str(to_string(t.space));
  if (role != Role::gradient && !elem_type(t.dtype))
    return std::string(name) + ": expected bf16, f16, f32 or f64, got " + str(to_string(t.dtype));
  if (t.dtype != dtype)
    return std::string(name) + ": expected the dtype of q (" + str(to_string(dtype)) + "), got " +
           str(to_string(t.dtype));
  const std::int64_t dim_stride = t.stride[static_cast<std::size_t>(t.rank - 1)];
  const bool seq_major = role == Role::input && t.stride[row_dim] == 1;
  if (dim_stride != 1 && !seq_major)
    return std::string(name) + ": expected head-dim stride 1, got " + std::to_string(dim_stride) +
           (role == Role::input ? " (or, sequence-major, row stride 1)" : "");
  return {};
}

// mask_rule.hpp's expressions reach |i + diag +- window| + 1 <= 2 (T + S) + 1 (windows are
// below T + S once resolved): within int when T + S stays below 2^30.
constexpr std::int64_t kMaxTPlusS = (std::int64_t{1} << 30) - 1;

std::string refusal(const ForwardProblem& p, const Dims& d, MemorySpace memory,
                    std::string_view who) {
  const std::string mem = str(to_string(memory));
  const std::pair<const char*, const Tensor*> main[] = {
      {"q", &p.q}, {"k", &p.k}, {"v", &p.v}, {"out", &p.out}};
  for (const auto& [name, t] : main)
    if (std::string why = tensor_refusal(name, *t, t == &p.out ? Role::out : Role::input, memory,
                                         p.q.dtype, d.packed ? 0 : 1);
        !why.empty())
      return why;
  const Extras& e = p.extras;
  const std::pair<const char*, const Tensor*> small[] = {{"extras.lse", &e.lse},
                                                         {"extras.seqlens_q", &e.seqlens_q},
                                                         {"extras.seqlens_k", &e.seqlens_k},
                                                         {"extras.cu_seqlens_q", &e.cu_seqlens_q},
                                                         {"extras.cu_seqlens_k", &e.cu_seqlens_k}};
  for (const auto& [name, t] : small) {
    if (!t->defined())
      continue;
    if (t->space != memory)
      return std::string(name) + ": expected " + mem + " memory, got " + str(to_string(t->space));
    // The kernels index lengths as plain int arrays.
    if (t->rank == 1 && t->stride[0] != 1)
      return std::string(name) + ": expected a contiguous tensor, got stride " +
             std::to_string(t->stride[0]);
  }
  if (e.page_table.defined()) { // i32 [B, max_pages_per_seq] (validated), rows read as int arrays
    if (e.page_table.space != memory)
      return "extras.page_table: expected " + mem + " memory, got " +
             str(to_string(e.page_table.space));
    if (e.page_table.extent[1] > 1 && e.page_table.stride[1] != 1)
      return "extras.page_table: expected contiguous rows (stride 1 along the pages), got stride " +
             std::to_string(e.page_table.stride[1]);
  }
  if (e.bias.defined())
    return "additive bias not implemented " + str(who);
  if (e.mask.defined())
    return "boolean mask not implemented " + str(who);
  if (e.alibi_slopes.defined())
    return "ALiBi not implemented " + str(who);
  if (e.sinks.defined())
    return "attention sinks (extras.sinks) not implemented " + str(who);
  if (p.options.dropout_p > 0.0)
    return "dropout not implemented " + str(who);
  if (std::string why = float_scale_limit(d, who); !why.empty())
    return why;
  if (std::string why = empty_sides_limit(p, who); !why.empty())
    return why;
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  for (std::int64_t x : {d.B, d.N, d.K, d.H, d.Hv})
    if (x > int_max)
      return "sizes: expected B, N, K, H and Hv to fit in 32 bits, got B=" + std::to_string(d.B) +
             " N=" + std::to_string(d.N) + " K=" + std::to_string(d.K) +
             " H=" + std::to_string(d.H) + " Hv=" + std::to_string(d.Hv);
  if (d.T + d.S > kMaxTPlusS)
    return "sizes: expected T + S <= " + std::to_string(kMaxTPlusS) +
           " (the kernels' 32-bit index arithmetic), got T=" + std::to_string(d.T) +
           " S=" + std::to_string(d.S);
  return {};
}

} // namespace

FlashParamsResult make_flash_params(const ForwardProblem& p, const Dims& d, MemorySpace memory,
                                    std::string_view who) {
  FlashParamsResult r;
  r.reason = refusal(p, d, memory, who);
  if (!r.ok())
    return r;
  FlashFwdParams& f = r.params;
  f.dtype = *elem_type(p.q.dtype);
  f.q = p.q.data;
  f.k = p.k.data;
  f.v = p.v.data;
  f.out = p.out.data;
  strides_of(p.q, d.packed, f.q_batch_stride, f.q_row_stride, f.q_head_stride);
  strides_of(p.k, d.packed, f.k_batch_stride, f.k_row_stride, f.k_head_stride);
  strides_of(p.v, d.packed, f.v_batch_stride, f.v_row_stride, f.v_head_stride);
  strides_of(p.out, d.packed, f.o_batch_stride, f.o_row_stride, f.o_head_stride);
  f.q_dim_stride = p.q.stride[static_cast<std::size_t>(p.q.rank - 1)];
  f.k_dim_stride = p.k.stride[static_cast<std::size_t>(p.k.rank - 1)];
  f.v_dim_stride = p.v.stride[static_cast<std::size_t>(p.v.rank - 1)];
  const Extras& e = p.extras;
  if (e.lse.defined()) { // [B, N, T] or packed [N, total_q]
    f.lse = static_cast<float*>(e.lse.data);
    f.lse_batch_stride = d.packed ? 0 : e.lse.stride[0];
    f.lse_head_stride = e.lse.stride[d.packed ? 0 : 1];
    f.lse_row_stride = e.lse.stride[d.packed ? 1 : 2];
  }
  // Packed: T and S are the longest sequences (validation requires max_seqlen_q/k when the
  // offsets live on the device).
  f.B = static_cast<int>(d.B);
  f.T = static_cast<int>(d.T);
  f.S = static_cast<int>(d.S);
  f.N = static_cast<int>(d.N);
  f.K = static_cast<int>(d.K);
  f.H = static_cast<int>(d.H);
  f.Hv = static_cast<int>(d.Hv);
  if (d.packed) {
    f.cu_seqlens_q = static_cast<const int*>(e.cu_seqlens_q.data);
    f.cu_seqlens_k = static_cast<const int*>(e.cu_seqlens_k.data);
    f.total_q = p.q.extent[0];
    f.total_k = p.k.extent[0];
  }
  if (d.paged) { // k, v [num_pages, page_size, K, H|Hv]: strides_of gave the page stride as batch
    f.page_table = static_cast<const int*>(e.page_table.data);
    f.page_table_stride = e.page_table.extent[0] > 1 ? e.page_table.stride[0] : 0;
    f.page_size = static_cast<int>(d.page_size); // <= S < 2^30 (below)
    // Page ids are i32: pages past INT_MAX cannot be named, so the count saturates there.
    f.num_pages =
        static_cast<int>(std::min<std::int64_t>(p.k.extent[0], std::numeric_limits<int>::max()));
  }
  f.seqlens_q = static_cast<const int*>(e.seqlens_q.data);
  f.seqlens_k = static_cast<const int*>(e.seqlens_k.data);
  f.scale = static_cast<float>(d.scale);
  f.softcap = static_cast<float>(d.softcap);
  f.scale_f64 = d.scale;
  f.softcap_f64 = d.softcap;
  // Validation resolved windows of T + S or more to -1: the rest are below T + S < 2^30.
  f.window_left = static_cast<int>(d.window_left);
  f.window_right = static_cast<int>(d.window_right);
  f.bottom_right = p.options.alignment == Alignment::bottom_right;
  f.tf32 = p.options.allow_tf32 && f.dtype == ElemType::f32;
  return r;
}

FlashBwdParamsResult make_flash_bwd_params(const BackwardProblem& p, const Dims& d,
                                           MemorySpace memory, std::string_view who) {
  FlashBwdParamsResult r;
  FlashParamsResult fwd = make_flash_params(p.forward, d, memory, who);
  if (!fwd.ok()) {
    r.reason = std::move(fwd.reason);
    return r;
  }
  if (!p.forward.extras.lse.defined()) {
    r.reason = "extras.lse: expected the forward's LSE (the backward recomputes P from it)";
    return r;
  }
  if (p.dbias.defined()) {
    r.reason = "dbias not implemented " + str(who);
    return r;
  }
  const std::pair<const char*, const Tensor*> grads[] = {
      {"dout", &p.dout}, {"dq", &p.dq}, {"dk", &p.dk}, {"dv", &p.dv}};
  for (const auto& [name, t] : grads) {
    r.reason =
        tensor_refusal(name, *t, Role::gradient, memory, p.forward.q.dtype, d.packed ? 0 : 1);
    if (!r.ok())
      return r;
  }
  FlashBwdParams& b = r.params;
  b.fwd = fwd.params;
  b.dout = p.dout.data;
  b.dq = p.dq.data;
  b.dk = p.dk.data;
  b.dv = p.dv.data;
  strides_of(p.dout, d.packed, b.do_batch_stride, b.do_row_stride, b.do_head_stride);
  strides_of(p.dq, d.packed, b.dq_batch_stride, b.dq_row_stride, b.dq_head_stride);
  strides_of(p.dk, d.packed, b.dk_batch_stride, b.dk_row_stride, b.dk_head_stride);
  strides_of(p.dv, d.packed, b.dv_batch_stride, b.dv_row_stride, b.dv_head_stride);
  b.deterministic = p.forward.options.deterministic;
  return r;
}

} // namespace kattn
