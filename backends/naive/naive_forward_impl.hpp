// Kernels of the naive forward (see naive.hpp). Included only by naive_forward_<space>.cpp.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <exception>
#include <string>

#include "kattn_kernels/mask_rule.hpp"
#include "kokkos_common/kokkos_scalar.hpp"
#include "kokkosattn/errors.hpp"
#include "naive/naive_forward.hpp"

namespace kattn::naive {
namespace detail {

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

template <class ExecSpace, class T>
void forward_typed(const ExecSpace& exec, const ForwardProblem& p, const Dims& d) {
  using Traits = KokkosAttn::Impl::scalar_traits<T>;
  using Acc = typename Traits::acc;
  using Mem = typename ExecSpace::memory_space;
  using Policy3 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3>, Kokkos::IndexType<Index>>;
  using Policy4 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>, Kokkos::IndexType<Index>>;

  const auto q = wrap4<const T, Mem>(p.q);
  const auto k = wrap4<const T, Mem>(p.k);
  const auto v = wrap4<const T, Mem>(p.v);
  const auto out = wrap4<T, Mem>(p.out);

  Params a;
  a.B = d.B, a.N = d.N, a.T = d.T, a.S = d.S, a.H = d.H, a.Hv = d.Hv, a.group = d.N / d.K;
  a.scale = d.scale;
  a.softcap = d.softcap;
  a.bottom_right = p.options.alignment == Alignment::bottom_right;
  a.window_left = d.window_left;
  a.window_right = d.window_right;
  a.bias = side(p.extras.bias);
  a.mask = side(p.extras.mask);
  a.slopes = side(p.extras.alibi_slopes);
  a.lens_q = side(p.extras.seqlens_q);
  a.lens_k = side(p.extras.seqlens_k);
  a.lse = side(p.extras.lse);

  // The materialised score matrix: the whole point (and cost) of this backend.
  Kokkos::View<Acc****, Kokkos::LayoutRight, Mem> scores;
  try {
    scores = decltype(scores)(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "KokkosAttn::naive::scores"), d.B,
        d.N, d.T, d.S);
  } catch (const std::exception& e) {
    throw BackendFailure("naive: could not allocate the [B, N, T, S] = [" + std::to_string(d.B) +
                         ", " + std::to_string(d.N) + ", " + std::to_string(d.T) + ", " +
                         std::to_string(d.S) + "] score matrix (" +
                         std::to_string(d.B * d.N * d.T * d.S * static_cast<Index>(sizeof(Acc))) +
                         " bytes): " + e.what());
  }

  const Acc neg_inf = -Kokkos::Experimental::infinity_v<Acc>;
  const Index q_hs = static_cast<Index>(q.stride(3)), k_hs = static_cast<Index>(k.stride(3));

  // 1. scores = mask(softcap(scale * q.k) + bias + alibi), -inf where not visible.
  Kokkos::parallel_for(
      "KokkosAttn::naive::scores", Policy4(exec, {0, 0, 0, 0}, {a.B, a.N, a.T, a.S}),
      KOKKOS_LAMBDA(const Index b, const Index n, const Index i, const Index j) {
        const MaskRule rule =
            make_mask_rule(length_of(a.lens_q, b, a.T), length_of(a.lens_k, b, a.S), a.bottom_right,
                           a.window_left, a.window_right);
        bool visible = rule.visible(i, j);
        if (visible && a.mask.data)
          visible = static_cast<const std::uint8_t*>(
                        a.mask.data)[broadcast_offset(a.mask, b, n, i, j)] != 0;
        if (!visible) {
          scores(b, n, i, j) = neg_inf;
          return;
        }
        const Index kh = n / a.group;
        // Head rows through raw pointers: with unit head-dim strides (the common layouts) the
        // dot product is a plain contiguous loop the compiler can vectorise.
        const T* qrow = &q(b, i, n, 0);
        const T* krow = &k(b, j, kh, 0);
        Acc dot = 0;
        if (q_hs == 1 && k_hs == 1) {
          for (Index h = 0; h < a.H; ++h)
            dot += Traits::load(qrow[h]) * Traits::load(krow[h]);
        } else {
          for (Index h = 0; h < a.H; ++h)
            dot += Traits::load(qrow[h * q_hs]) * Traits::load(krow[h * k_hs]);
        }
        Acc s = static_cast<Acc>(a.scale) * dot;
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
        scores(b, n, i, j) = s;
      });

  // 2. Row softmax in place; LSE (natural log). Rows without a finite score: all zero, -inf.
  // The max keeps a NaN score (Kokkos::max would skip it), so such a row, like one with a +inf
  // score, comes out NaN (docs/semantics.md non_finite) rather than as an empty row.
  Kokkos::parallel_for(
      "KokkosAttn::naive::softmax", Policy3(exec, {0, 0, 0}, {a.B, a.N, a.T}),
      KOKKOS_LAMBDA(const Index b, const Index n, const Index i) {
        Acc m = neg_inf;
        for (Index j = 0; j < a.S; ++j) {
          const Acc x = scores(b, n, i, j);
          m = (x > m || Kokkos::isnan(x)) ? x : m; // NaN sticks: nothing compares above it
        }
        float* lse = static_cast<float*>(a.lse.data);
        const Index lse_at =
            lse ? b * a.lse.stride[0] + n * a.lse.stride[1] + i * a.lse.stride[2] : 0;
        if (m == neg_inf) {
          for (Index j = 0; j < a.S; ++j)
            scores(b, n, i, j) = 0;
          if (lse)
            lse[lse_at] = -Kokkos::Experimental::infinity_v<float>;
          return;
        }
        Acc sum = 0;
        for (Index j = 0; j < a.S; ++j) {
          const Acc e = Kokkos::exp(scores(b, n, i, j) - m);
          scores(b, n, i, j) = e;
          sum += e;
        }
        const Acc inv = Acc(1) / sum;
        for (Index j = 0; j < a.S; ++j)
          scores(b, n, i, j) *= inv;
        if (lse)
          lse[lse_at] = static_cast<float>(m + Kokkos::log(sum));
      });

  // 3. out = P . V, one team per (b, n, i) row (query head n reads KV head n / group). The row
  // accumulates in scratch with keys outermost so that v rows are read contiguously. Zero
  // weights are skipped so that masked keys never reach the output, whatever v holds there
  // (padding may be garbage).
  using TeamPolicy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<Index>>;
  using Member = typename TeamPolicy::member_type;
  using RowScratch = Kokkos::View<Acc*, typename ExecSpace::scratch_memory_space,
                                  Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  TeamPolicy pv_policy(exec, a.B * a.N * a.T, Kokkos::AUTO);
  pv_policy.set_scratch_size(0, Kokkos::PerTeam(RowScratch::shmem_size(a.Hv)));
  Kokkos::parallel_for(
      "KokkosAttn::naive::pv", pv_policy, KOKKOS_LAMBDA(const Member& team) {
        const Index row = team.league_rank();
        const Index i = row % a.T, n = (row / a.T) % a.N, b = row / (a.T * a.N);
        const Index kh = n / a.group;
        RowScratch acc(team.team_scratch(0), a.Hv);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, a.Hv),
                             [&](const Index c) { acc(c) = 0; });
        for (Index j = 0; j < a.S; ++j) {
          const Acc w = scores(b, n, i, j);
          if (w == 0)
            continue;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, a.Hv),
                               [&](const Index c) { acc(c) += w * Traits::load(v(b, j, kh, c)); });
        }
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, a.Hv),
                             [&](const Index c) { out(b, i, n, c) = Traits::store(acc(c)); });
      });

  // The score matrix is ours: wait for this instance (not a global fence) before releasing it.
  exec.fence("KokkosAttn::naive: release the score matrix");
}

} // namespace detail

template <class ExecSpace>
void forward_on(const ExecSpace& exec, const ForwardProblem& p, const Dims& d) {
  switch (p.q.dtype) {
  case DType::f64:
    return detail::forward_typed<ExecSpace, double>(exec, p, d);
  case DType::f32:
    return detail::forward_typed<ExecSpace, float>(exec, p, d);
  case DType::f16:
    return detail::forward_typed<ExecSpace, KokkosAttn::Impl::f16_storage>(exec, p, d);
  case DType::bf16:
    return detail::forward_typed<ExecSpace, KokkosAttn::Impl::bf16_storage>(exec, p, d);
  default:
    throw Unsupported("naive: dtype " + std::string(to_string(p.q.dtype)) +
                      " is not supported (f64, f32, f16, bf16)");
  }
}

} // namespace kattn::naive
