// The naive forward's problem encoding, shared by its loop and Kokkos Kernels products: the
// tensors as unmanaged strided Views, the side tensors as plain structs, and the score rule
// around the product q.k (docs/semantics.md), in one place for both.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "kattn_kernels/mask_rule.hpp"
#include "kokkos_common/kokkos_scalar.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn::naive::detail {

using Index = std::int64_t;

template <class T, class Mem>
using Strided4 =
    Kokkos::View<T****, Kokkos::LayoutStride, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// q, k, v, out as unmanaged strided Views of their storage type. Dims of extent 1 may carry any
// stride (0 included); they get 1 so that the layout is well formed.
template <class T, class Mem>
Strided4<T, Mem> wrap4(const Tensor& t) {
  const auto e = [&](int d) {
    return static_cast<std::size_t>(t.extent[static_cast<std::size_t>(d)]);
  };
  const auto s = [&](int d) {
    const auto r = static_cast<std::size_t>(d);
    return static_cast<std::size_t>(t.extent[r] == 1 ? 1 : t.stride[r]);
  };
  const Kokkos::LayoutStride layout(e(0), s(0), e(1), s(1), e(2), s(2), e(3), s(3));
  return Strided4<T, Mem>(static_cast<T*>(t.data), layout);
}

// An optional side tensor (bias, mask, ALiBi slopes, lengths, LSE) read through its raw pointer
// inside kernels: a plain copyable struct, valid on any device.
struct Side {
  void* data = nullptr;
  DType dtype = DType::f32;
  int rank = 0;
  Index extent[Tensor::max_rank] = {};
  Index stride[Tensor::max_rank] = {};
};

inline Side side(const Tensor& t) {
  Side s;
  if (!t.defined())
    return s;
  s.data = t.data;
  s.dtype = t.dtype;
  s.rank = t.rank;
  for (int d = 0; d < t.rank; ++d) {
    s.extent[d] = t.extent[static_cast<std::size_t>(d)];
    s.stride[d] = t.stride[static_cast<std::size_t>(d)];
  }
  return s;
}

// Offset of score element (b, n, i, j) in a tensor broadcast over [B|1, N|1, T, S]: dims align
// from the right, and a dim of extent 1 is broadcast.
KOKKOS_INLINE_FUNCTION Index broadcast_offset(const Side& t, Index b, Index n, Index i, Index j) {
  const Index idx[4] = {b, n, i, j};
  Index off = 0;
  for (int d = 0; d < t.rank; ++d)
    if (t.extent[d] != 1)
      off += idx[4 - t.rank + d] * t.stride[d];
  return off;
}

KOKKOS_INLINE_FUNCTION Index length_of(const Side& lens, Index b, Index fallback) {
  return lens.data
             ? static_cast<Index>(static_cast<const std::int32_t*>(lens.data)[b * lens.stride[0]])
             : fallback;
}

// Everything the kernels need besides the Views, captured by value.
struct Params {
  Index B = 0, N = 0, T = 0, S = 0, H = 0, Hv = 0, group = 1;
  double scale = 1.0, softcap = 0.0;
  bool bottom_right = false;
  Index window_left = -1, window_right = -1;
  Side bias, mask, slopes, lens_q, lens_k, lse;
};

// The window rule of batch b's sequence.
KOKKOS_INLINE_FUNCTION MaskRule rule_of(const Params& a, Index b) {
  return make_mask_rule(length_of(a.lens_q, b, a.T), length_of(a.lens_k, b, a.S), a.bottom_right,
                        a.window_left, a.window_right);
}

// Whether query i of head n, batch b sees key j: the window rule, then the boolean mask.
KOKKOS_INLINE_FUNCTION bool sees(const Params& a, const MaskRule& rule, Index b, Index n, Index i,
                                 Index j) {
  if (!rule.visible(i, j))
    return false;
  return !a.mask.data ||
         static_cast<const std::uint8_t*>(a.mask.data)[broadcast_offset(a.mask, b, n, i, j)] != 0;
}

// Whether the score rule is the window alone: no boolean mask, bias, ALiBi or softcap.
KOKKOS_INLINE_FUNCTION bool rule_is_window_only(const Params& a) {
  return !a.mask.data && !a.bias.data && !a.slopes.data && !(a.softcap > 0);
}

// The score rule after the product s = scale * q.k (docs/semantics.md): softcap, bias, ALiBi.
template <class Acc>
KOKKOS_INLINE_FUNCTION Acc score_of(const Params& a, const MaskRule& rule, Index b, Index n,
                                    Index i, Index j, Acc s) {
  if (a.softcap > 0) {
    const Acc c = static_cast<Acc>(a.softcap);
    s = c * Kokkos::tanh(s / c);
  }
  if (a.bias.data)
    s += KokkosAttn::Impl::load_as<Acc>(a.bias.data, a.bias.dtype,
                                        broadcast_offset(a.bias, b, n, i, j));
  if (a.slopes.data) {
    const Index off = a.slopes.rank == 1 ? n * a.slopes.stride[0]
                                         : b * a.slopes.stride[0] + n * a.slopes.stride[1];
    s += static_cast<Acc>(rule.alibi(static_cast<const float*>(a.slopes.data)[off], i, j));
  }
  return s;
}

} // namespace kattn::naive::detail
