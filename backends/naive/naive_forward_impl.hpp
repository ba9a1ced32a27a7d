// Kernels of the naive forward (see naive.hpp). Included only by naive_forward_<space>.cpp.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "kokkos_common/kokkos_scalar.hpp"
#include "kokkos_common/light_launch.hpp"
#include "kokkosattn/detail/checked_size.hpp"
#include "kokkosattn/errors.hpp"
#include "naive/naive_forward.hpp"
#include "naive/naive_params.hpp"
#include "naive/naive_scratch.hpp"
#include "naive/naive_softmax.hpp"
#if KOKKOSATTN_HAS_KOKKOSKERNELS
#include "naive/naive_direct_gemm.hpp"
#include "naive/naive_gemm.hpp"
#endif
#if defined(KATTN_NAIVE_CUBLAS_BATCH) && KATTN_NAIVE_CUBLAS_BATCH
#define KATTN_NAIVE_DIRECT 1
#else
#define KATTN_NAIVE_DIRECT 0
#endif

namespace kattn::naive {
namespace detail {

// Where the parts of the working memory lie (bytes from its start): the scores first, then the
// packed q and k heads (first, second), whose room the packed v and out heads take once the
// scores are computed. The loop path needs the scores alone.
struct ScratchLayout {
  std::size_t first = 0, second = 0, bytes = 0;
};

template <class Acc>
ScratchLayout scratch_layout(const Params& a, Products products) {
  const Index K = a.N / a.group;
  const std::int64_t elem = sizeof(Acc);
  // Element counts, checked (support() bounds the scores alone): a wrapped size would lease
  // too little. The quarter leaves room for the alignment padding and the sums below.
  const std::int64_t limit = PTRDIFF_MAX / 4;
  const auto count = [&](std::int64_t x, std::int64_t y, std::int64_t z, std::int64_t w) {
    const std::optional<std::int64_t> n = checked_product({x, y, z, w, elem});
    if (!n || *n > limit)
      throw BackendFailure("naive: working memory past " + std::to_string(limit) + " bytes ([" +
                           std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) +
                           ", " + std::to_string(w) + "] of " + std::to_string(elem) +
                           "-byte elements)");
    return static_cast<std::size_t>(*n / elem);
  };
  const auto e = static_cast<std::size_t>(elem);
  ScratchLayout l;
  l.first = aligned_bytes(count(a.B, a.N, a.T, a.S), e);
  l.bytes = l.first;
  if (products == Products::gemm) {
    const std::size_t q_heads = aligned_bytes(count(a.B, a.N, a.T, a.H), e);
    const std::size_t v_heads = aligned_bytes(count(a.B, K, a.S, a.Hv), e);
    l.second = l.first + std::max(q_heads, v_heads);
    l.bytes = l.second + std::max(aligned_bytes(count(a.B, K, a.S, a.H), e),
                                  aligned_bytes(count(a.B, a.N, a.T, a.Hv), e));
  }
  return l;
}

#if KATTN_NAIVE_DIRECT
// The GEMM path on the caller's tensors (naive_direct_gemm.hpp): scores, the softmax, out.
template <class Mem, class Acc>
void forward_direct(const Kokkos::Cuda& exec, const Params& a, const Strided4<const Acc, Mem>& q,
                    const Strided4<const Acc, Mem>& k, const Strided4<const Acc, Mem>& v,
                    const Strided4<Acc, Mem>& out) {
  const std::size_t scores_bytes = scratch_layout<Acc>(a, Products::loops).bytes;
  const ScratchLease<Kokkos::Cuda> scratch(exec, scores_bytes + direct_operand_bytes(a));
  const ScoreRows<Acc, Mem> scores(scratch.template at<Acc>(0), a.B * a.N * a.T, a.S);
  const DirectOperands<Acc> ops =
      direct_operands_at<Acc>(scratch.template at<unsigned char>(scores_bytes), a);
  direct_scores(exec, q, k, v, out, a, ops, scores.data());
  softmax_rows<true>(exec, a, scores);
  direct_out(exec, v, out, a, ops);
}
#endif

template <class ExecSpace, class T>
void forward_typed(const ExecSpace& exec, const ForwardProblem& p, const Dims& d,
                   Products products) {
  using Traits = KokkosAttn::Impl::scalar_traits<T>;
  using Acc = typename Traits::acc;
  using Mem = typename ExecSpace::memory_space;
  // Keys innermost: neighbouring threads write neighbouring scores.
  using Policy4 =
      Kokkos::MDRangePolicy<ExecSpace,
                            Kokkos::Rank<4, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                            Kokkos::IndexType<Index>>;

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

#if KATTN_NAIVE_DIRECT
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda> && std::is_same_v<T, Acc>)
    if (products == Products::gemm && direct_products_serve(a, q, k, v, out))
      return forward_direct(exec, a, q, k, v, out);
#endif
  const ScratchLayout layout = scratch_layout<Acc>(a, products);
  // The kernels below are enqueued on exec and use the lease's memory, which the next lease
  // hands on in stream order (naive_scratch.hpp).
  const ScratchLease<ExecSpace> scratch(exec, layout.bytes);
  // The materialised score matrix: the whole point (and cost) of this backend.
  const ScoreRows<Acc, Mem> scores(scratch.template at<Acc>(0), a.B * a.N * a.T, a.S);

  const Acc neg_inf = -Kokkos::Experimental::infinity_v<Acc>;
  const Index q_hs = static_cast<Index>(q.stride(3)), k_hs = static_cast<Index>(k.stride(3));

  // 1. scores = mask(softcap(scale * q.k) + bias + alibi), -inf where not visible (the GEMM
  // path leaves scale * q.k and the softmax applies the rule).
  if (products == Products::gemm) {
#if KOKKOSATTN_HAS_KOKKOSKERNELS
    gemm_scores<Traits>(exec, q, k, a, scratch.template at<Acc>(layout.first),
                        scratch.template at<Acc>(layout.second), scores.data());
    softmax_rows<true>(exec, a, scores);
#endif
  } else {
    Kokkos::parallel_for(
        "KokkosAttn::naive::scores",
        kokkos_common::light_launch(Policy4(exec, {0, 0, 0, 0}, {a.B, a.N, a.T, a.S})),
        KOKKOS_LAMBDA(const Index b, const Index n, const Index i, const Index j) {
          Acc& s = scores((b * a.N + n) * a.T + i, j);
          const MaskRule rule = rule_of(a, b);
          if (!sees(a, rule, b, n, i, j)) {
            s = neg_inf;
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
          s = score_of<Acc>(a, rule, b, n, i, j, static_cast<Acc>(a.scale) * dot);
        });
    softmax_rows<false>(exec, a, scores);
  }

  // 2. out = P . V.
  if (products == Products::gemm) {
#if KOKKOSATTN_HAS_KOKKOSKERNELS
    gemm_out<Traits>(exec, scores.data(), v, out, a, scratch.template at<Acc>(layout.first),
                     scratch.template at<Acc>(layout.second));
#endif
  } else {
    // One team per (b, n, i) row (query head n reads KV head n / group). The row
    // accumulates in scratch with keys outermost so that v rows are read contiguously. Zero
    // weights are skipped so that masked keys never reach the output, whatever v holds there
    // (padding may be garbage).
    using TeamPolicy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<Index>>;
    using Member = typename TeamPolicy::member_type;
    using RowScratch = Kokkos::View<Acc*, typename ExecSpace::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    auto pv_policy = kokkos_common::light_launch(TeamPolicy(exec, a.B * a.N * a.T, Kokkos::AUTO));
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
            const Acc w = scores(row, j);
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
