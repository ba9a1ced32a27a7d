// The naive forward's two products as Kokkos Kernels GEMMs (the codelab's einsum steps):
// S_bn = scale * Q_bn K_bk^T and O_bn = P_bn V_bk for every batch b and query head n (KV head
// k = n / group), each a KokkosBlas::gemm on `exec`, which hands it to the build's BLAS TPL
// (OpenBLAS, cuBLAS, rocBLAS) where Kokkos Kernels has one for the View types, else to its own
// kernel. The operands are first packed head-major in the accumulation type ([B, heads, L, D],
// dense row-major): the form the TPLs take (a [B, L, heads, D] slice is strided), and the
// widening of 16-bit inputs happens there once. Packing also zeroes the keys past a padded
// batch's length, so that whatever the caller's padding holds never meets a zero weight.
#pragma once

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>

#include <exception>
#include <string>

#include "kokkosattn/errors.hpp"
#include "naive/naive_params.hpp"

namespace kattn::naive::detail {

template <class Acc, class Mem>
using Dense4 = Kokkos::View<Acc****, Kokkos::LayoutRight, Mem>;

template <class Acc, class ExecSpace>
Dense4<Acc, typename ExecSpace::memory_space>
allocate_dense(const ExecSpace& exec, const char* label, Index e0, Index e1, Index e2, Index e3) {
  try {
    return Dense4<Acc, typename ExecSpace::memory_space>(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(label)), e0, e1, e2, e3);
  } catch (const std::exception& e) {
    throw BackendFailure(std::string("naive: could not allocate ") + label + ": " + e.what());
  }
}

// x [B, L, heads, D] -> [B, heads, L, D] in Acc. Keys (lengths from a.lens_k) past their
// sequence's length become 0.
template <class Traits, class Acc, class ExecSpace, class T, class Mem>
Dense4<Acc, Mem> head_major(const ExecSpace& exec, const char* label,
                            const Strided4<const T, Mem>& x, const Params& a, bool keys) {
  using Policy4 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>, Kokkos::IndexType<Index>>;
  const Index B = static_cast<Index>(x.extent(0)), L = static_cast<Index>(x.extent(1));
  const Index heads = static_cast<Index>(x.extent(2)), D = static_cast<Index>(x.extent(3));
  Dense4<Acc, Mem> r = allocate_dense<Acc>(exec, label, B, heads, L, D);
  Kokkos::parallel_for(
      label, Policy4(exec, {0, 0, 0, 0}, {B, L, heads, D}),
      KOKKOS_LAMBDA(const Index b, const Index t, const Index h, const Index c) {
        const Index len = keys ? length_of(a.lens_k, b, L) : L;
        r(b, h, t, c) = t < len ? static_cast<Acc>(Traits::load(x(b, t, h, c))) : Acc(0);
      });
  return r;
}

// scores(b, n, i, j) = the score rule on scale * q.k where query i sees key j, -inf elsewhere.
template <class Traits, class ExecSpace, class T, class Mem, class Acc>
void gemm_scores(const ExecSpace& exec, const Strided4<const T, Mem>& q,
                 const Strided4<const T, Mem>& k, const Params& a, const Dense4<Acc, Mem>& scores) {
  using Policy4 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>, Kokkos::IndexType<Index>>;
  const Dense4<Acc, Mem> qh =
      head_major<Traits, Acc>(exec, "KokkosAttn::naive::q_heads", q, a, false);
  const Dense4<Acc, Mem> kh =
      head_major<Traits, Acc>(exec, "KokkosAttn::naive::k_heads", k, a, true);
  const auto all = Kokkos::ALL;
  for (Index b = 0; b < a.B; ++b)
    for (Index n = 0; n < a.N; ++n)
      KokkosBlas::gemm(exec, "N", "T", static_cast<Acc>(a.scale),
                       Kokkos::subview(qh, b, n, all, all),
                       Kokkos::subview(kh, b, n / a.group, all, all), Acc(0),
                       Kokkos::subview(scores, b, n, all, all));
  const Acc neg_inf = -Kokkos::Experimental::infinity_v<Acc>;
  Kokkos::parallel_for(
      "KokkosAttn::naive::score_rule", Policy4(exec, {0, 0, 0, 0}, {a.B, a.N, a.T, a.S}),
      KOKKOS_LAMBDA(const Index b, const Index n, const Index i, const Index j) {
        const MaskRule rule = rule_of(a, b);
        Acc& s = scores(b, n, i, j);
        s = sees(a, rule, b, n, i, j) ? score_of<Acc>(a, rule, b, n, i, j, s) : neg_inf;
      });
  exec.fence("KokkosAttn::naive: release the packed q and k");
}

// out(b, i, n, :) = P_bn(i, :) V_bk: the probabilities in `probs` times the packed v.
template <class Traits, class ExecSpace, class T, class Mem, class Acc>
void gemm_out(const ExecSpace& exec, const Dense4<Acc, Mem>& probs, const Strided4<const T, Mem>& v,
              const Strided4<T, Mem>& out, const Params& a) {
  using Policy4 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>, Kokkos::IndexType<Index>>;
  const Dense4<Acc, Mem> vh =
      head_major<Traits, Acc>(exec, "KokkosAttn::naive::v_heads", v, a, true);
  const Dense4<Acc, Mem> oh =
      allocate_dense<Acc>(exec, "KokkosAttn::naive::out_heads", a.B, a.N, a.T, a.Hv);
  const auto all = Kokkos::ALL;
  for (Index b = 0; b < a.B; ++b)
    for (Index n = 0; n < a.N; ++n)
      KokkosBlas::gemm(exec, "N", "N", Acc(1), Kokkos::subview(probs, b, n, all, all),
                       Kokkos::subview(vh, b, n / a.group, all, all), Acc(0),
                       Kokkos::subview(oh, b, n, all, all));
  Kokkos::parallel_for(
      "KokkosAttn::naive::store_out", Policy4(exec, {0, 0, 0, 0}, {a.B, a.T, a.N, a.Hv}),
      KOKKOS_LAMBDA(const Index b, const Index i, const Index n, const Index c) {
        out(b, i, n, c) = Traits::store(oh(b, n, i, c));
      });
  exec.fence("KokkosAttn::naive: release the packed v and out");
}

} // namespace kattn::naive::detail
