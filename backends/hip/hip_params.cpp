// ForwardProblem + Dims -> FlashFwdParams, refusing (with a reason) what the kernels lack.
#include "hip/hip_params.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include "kattn_hip/flash_fwd.hpp"

namespace kattn::hip_kernels {
namespace {

std::string where(const Tensor& t) {
  return std::string(to_string(t.space));
}

// [batch, row, head] strides of a q/k/v/out view (batched rank 4, packed rank 3).
void strides_of(const Tensor& t, bool packed, std::int64_t& batch, std::int64_t& row,
                std::int64_t& head) {
  const std::size_t o = packed ? 0 : 1;
  batch = packed ? 0 : t.stride[0];
  row = t.stride[o];
  head = t.stride[o + 1];
}

bool fits_int(std::int64_t x) {
  return x >= 0 && x <= std::numeric_limits<int>::max();
}

// A window reaching T + S keys or more cuts nothing (no key is that far from any diagonal
// position): unbounded, so huge windows need not fit in int.
std::int64_t effective_window(std::int64_t w, std::int64_t T, std::int64_t S) {
  return w >= T + S ? -1 : w;
}

} // namespace

ParamsFromProblem make_flash_fwd_params(const ForwardProblem& p, const Dims& d,
                                        MemorySpace memory) {
  ParamsFromProblem r;
  auto no = [&r](std::string why) {
    r.reason = std::move(why);
    return r;
  };
  const std::pair<const char*, const Tensor*> main[] = {
      {"q", &p.q}, {"k", &p.k}, {"v", &p.v}, {"out", &p.out}};
  for (const auto& [name, t] : main) {
    if (t->space != memory)
      return no(std::string(name) + ": expected " + std::string(to_string(memory)) +
                " memory, got " + where(*t));
    if (t->dtype != DType::bf16 && t->dtype != DType::f16)
      return no(std::string(name) + ": expected bf16 or f16, got " +
                std::string(to_string(t->dtype)));
    if (t->dtype != p.q.dtype)
      return no(std::string(name) + ": expected the dtype of q");
    if (t->stride[static_cast<std::size_t>(t->rank - 1)] != 1)
      return no(std::string(name) + ": expected head-dim stride 1, got " +
                std::to_string(t->stride[static_cast<std::size_t>(t->rank - 1)]));
  }
  if (p.extras.bias.defined())
    return no("bias not implemented in the hip kernels");
  if (p.extras.mask.defined())
    return no("boolean mask not implemented in the hip kernels");
  if (p.extras.alibi_slopes.defined())
    return no("ALiBi not implemented in the hip kernels");
  if (p.options.dropout_p > 0.0)
    return no("dropout not implemented in the hip kernels");
  const std::pair<const char*, const Tensor*> extras[] = {
      {"extras.lse", &p.extras.lse},
      {"extras.seqlens_q", &p.extras.seqlens_q},
      {"extras.seqlens_k", &p.extras.seqlens_k},
      {"extras.cu_seqlens_q", &p.extras.cu_seqlens_q},
      {"extras.cu_seqlens_k", &p.extras.cu_seqlens_k}};
  for (const auto& [name, t] : extras)
    if (t->defined() && t->space != memory)
      return no(std::string(name) + ": expected " + std::string(to_string(memory)) +
                " memory, got " + where(*t));
  std::int64_t T = d.T, S = d.S;
  if (d.packed) {
    // The grid needs the longest sequence; device-resident cu_seqlens cannot be read here.
    if (p.extras.max_seqlen_q <= 0 || p.extras.max_seqlen_k <= 0)
      return no("packed varlen: expected extras.max_seqlen_q/k (cu_seqlens live on the device)");
    T = p.extras.max_seqlen_q;
    S = p.extras.max_seqlen_k;
  }
  for (std::int64_t x : {d.B, T, S, d.N, d.K, d.H, d.Hv})
    if (!fits_int(x))
      return no("sizes: expected B, T, S, N, K, H, Hv to fit in int");
  const std::int64_t wl = effective_window(d.window_left, T, S);
  const std::int64_t wr = effective_window(d.window_right, T, S);
  if (wl > std::numeric_limits<int>::max() || wr > std::numeric_limits<int>::max())
    return no("window: expected left/right to fit in int");

  FlashFwdParams& f = r.params;
  f.dtype = p.q.dtype == DType::bf16 ? ElemType::bf16 : ElemType::f16;
  f.q = p.q.data;
  f.k = p.k.data;
  f.v = p.v.data;
  f.out = p.out.data;
  strides_of(p.q, d.packed, f.q_batch_stride, f.q_row_stride, f.q_head_stride);
  strides_of(p.k, d.packed, f.k_batch_stride, f.k_row_stride, f.k_head_stride);
  strides_of(p.v, d.packed, f.v_batch_stride, f.v_row_stride, f.v_head_stride);
  strides_of(p.out, d.packed, f.o_batch_stride, f.o_row_stride, f.o_head_stride);
  if (p.extras.lse.defined()) { // [B, N, T] or packed [N, total]
    f.lse = static_cast<float*>(p.extras.lse.data);
    f.lse_batch_stride = d.packed ? 0 : p.extras.lse.stride[0];
    f.lse_head_stride = p.extras.lse.stride[d.packed ? 0 : 1];
    f.lse_row_stride = p.extras.lse.stride[d.packed ? 1 : 2];
  }
  f.B = static_cast<int>(d.B);
  f.T = static_cast<int>(T);
  f.S = static_cast<int>(S);
  f.N = static_cast<int>(d.N);
  f.K = static_cast<int>(d.K);
  f.H = static_cast<int>(d.H);
  f.Hv = static_cast<int>(d.Hv);
  f.cu_seqlens_q = static_cast<const int*>(p.extras.cu_seqlens_q.data);
  f.cu_seqlens_k = static_cast<const int*>(p.extras.cu_seqlens_k.data);
  f.seqlens_q = static_cast<const int*>(p.extras.seqlens_q.data);
  f.seqlens_k = static_cast<const int*>(p.extras.seqlens_k.data);
  f.scale = static_cast<float>(d.scale);
  f.softcap = static_cast<float>(p.options.softcap);
  f.window_left = static_cast<int>(wl);
  f.window_right = static_cast<int>(wr);
  f.bottom_right = p.options.alignment == Alignment::bottom_right;
  if (const FlashSupport s = supports(f); !s.ok)
    return no(s.reason);
  return r;
}

} // namespace kattn::hip_kernels
