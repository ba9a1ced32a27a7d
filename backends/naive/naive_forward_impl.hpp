// Kernels of the naive forward (see naive.hpp). Included only by naive_forward_<space>.cpp.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <exception>
#include <string>

#include "kokkos_common/kokkos_scalar.hpp"
#include "kokkosattn/errors.hpp"
#include "naive/naive_forward.hpp"
#include "naive/naive_params.hpp"
#if KOKKOSATTN_HAS_KOKKOSKERNELS
#include "naive/naive_gemm.hpp"
#endif

namespace kattn::naive {
namespace detail {

template <class ExecSpace, class T>
void forward_typed(const ExecSpace& exec, const ForwardProblem& p, const Dims& d,
                   Products products) {
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
  if (products == Products::gemm) {
#if KOKKOSATTN_HAS_KOKKOSKERNELS
    gemm_scores<Traits>(exec, q, k, a, scores);
#endif
  } else {
    Kokkos::parallel_for(
        "KokkosAttn::naive::scores", Policy4(exec, {0, 0, 0, 0}, {a.B, a.N, a.T, a.S}),
        KOKKOS_LAMBDA(const Index b, const Index n, const Index i, const Index j) {
          const MaskRule rule = rule_of(a, b);
          if (!sees(a, rule, b, n, i, j)) {
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
          scores(b, n, i, j) = score_of<Acc>(a, rule, b, n, i, j, static_cast<Acc>(a.scale) * dot);
        });
  }

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

  if (products == Products::gemm) {
#if KOKKOSATTN_HAS_KOKKOSKERNELS
    gemm_out<Traits>(exec, scores, v, out, a);
#endif
  } else {
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
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, a.Hv), [&](const Index c) {
              acc(c) += w * Traits::load(v(b, j, kh, c));
            });
          }
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, a.Hv),
                               [&](const Index c) { out(b, i, n, c) = Traits::store(acc(c)); });
        });
  }

  // The score matrix is ours: wait for this instance (not a global fence) before releasing it.
  exec.fence("KokkosAttn::naive: release the score matrix");
}

} // namespace detail

template <class ExecSpace>
void forward_on(const ExecSpace& exec, const ForwardProblem& p, const Dims& d, Products products) {
  if (products == Products::gemm && !have_kokkos_kernels)
    throw Unsupported("naive: built without Kokkos Kernels (KokkosAttn_ENABLE_KOKKOSKERNELS=OFF): "
                      "its products run as hand-written loops only");
  switch (p.q.dtype) {
  case DType::f64:
    return detail::forward_typed<ExecSpace, double>(exec, p, d, products);
  case DType::f32:
    return detail::forward_typed<ExecSpace, float>(exec, p, d, products);
  case DType::f16:
    return detail::forward_typed<ExecSpace, KokkosAttn::Impl::f16_storage>(exec, p, d, products);
  case DType::bf16:
    return detail::forward_typed<ExecSpace, KokkosAttn::Impl::bf16_storage>(exec, p, d, products);
  default:
    throw Unsupported("naive: dtype " + std::string(to_string(p.q.dtype)) +
                      " is not supported (f64, f32, f16, bf16)");
  }
}

} // namespace kattn::naive
