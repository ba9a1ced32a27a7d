// The naive forward's two products as Kokkos Kernels GEMMs (the codelab's einsum steps), one
// strided batch each over (batch, KV head):
//   scores[b, kh] = scale * Q[b, kh] K[b, kh]^T,  Q[b, kh] the group * T rows of the query heads
//                   that read KV head kh (heads n = kh * group + g are adjacent once packed, so
//                   GQA/MQA needs no copy of K)
//   out[b, kh]    = P[b, kh] V[b, kh]
// (naive_batched_gemm.hpp: cuBLAS strided batches on Kokkos::Cuda, else KokkosBlas::gemm). The
// operands are first packed head-major in the accumulation type ([B, heads, L, D], dense
// row-major), the form a BLAS takes (a [B, L, heads, D] slice is strided); the widening of 16-bit
// inputs happens there once. Packing zeroes the keys and values past a padded batch's length, so
// whatever the caller's padding holds never meets a zero weight. The score rule is applied by the
// softmax's first pass (naive_softmax.hpp).
#pragma once

#include <Kokkos_Core.hpp>

#include "kokkos_common/light_launch.hpp"
#include "naive/naive_batched_gemm.hpp"
#include "naive/naive_params.hpp"

namespace kattn::naive::detail {

// x [B, L, heads, D] -> dst [B, heads, L, D] in Acc, one thread per destination element
// (coalesced writes; reads are coalesced too where D is x's unit-stride dim). With `keys`, rows
// past batch b's key length (a.lens_k) become 0.
template <class Traits, class Acc, class ExecSpace, class T, class Mem>
void pack_heads(const ExecSpace& exec, const char* label, const Strided4<const T, Mem>& x,
                const Params& a, bool keys, Acc* dst) {
  const Index B = static_cast<Index>(x.extent(0)), L = static_cast<Index>(x.extent(1));
  const Index heads = static_cast<Index>(x.extent(2)), D = static_cast<Index>(x.extent(3));
  Kokkos::parallel_for(
      label,
      kokkos_common::light_launch(
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, B * heads * L * D)),
      KOKKOS_LAMBDA(const Index e) {
        const Index c = e % D, t = (e / D) % L, h = (e / (D * L)) % heads, b = e / (D * L * heads);
        const Index len = keys ? length_of(a.lens_k, b, L) : L;
        dst[e] = t < len ? static_cast<Acc>(Traits::load(x(b, t, h, c))) : Acc(0);
      });
}

// scores [B, N, T, S] = scale * q.k for every (b, n, i, j); qh, kh: room for the packed heads.
template <class Traits, class ExecSpace, class T, class Mem, class Acc>
void gemm_scores(const ExecSpace& exec, const Strided4<const T, Mem>& q,
                 const Strided4<const T, Mem>& k, const Params& a, Acc* qh, Acc* kh, Acc* scores) {
  pack_heads<Traits>(exec, "KokkosAttn::naive::q_heads", q, a, false, qh);
  pack_heads<Traits>(exec, "KokkosAttn::naive::k_heads", k, a, true, kh);
  const Index rows = a.group * a.T; // query rows per KV head
  batched_gemm(exec, SecondOp::transposed, a.B * (a.N / a.group), rows, a.S, a.H,
               static_cast<Acc>(a.scale), qh, rows * a.H, kh, a.S * a.H, scores, rows * a.S);
}

// out(b, i, n, :) = P_bn(i, :) V_bk: the probabilities in `probs` times the packed v.
template <class Traits, class ExecSpace, class T, class Mem, class Acc>
void gemm_out(const ExecSpace& exec, const Acc* probs, const Strided4<const T, Mem>& v,
              const Strided4<T, Mem>& out, const Params& a, Acc* vh, Acc* oh) {
  pack_heads<Traits>(exec, "KokkosAttn::naive::v_heads", v, a, true, vh);
  const Index rows = a.group * a.T;
  batched_gemm(exec, SecondOp::plain, a.B * (a.N / a.group), rows, a.Hv, a.S, Acc(1), probs,
               rows * a.S, vh, a.S * a.Hv, oh, rows * a.Hv);
  const Index N = a.N, TT = a.T, Hv = a.Hv;
  Kokkos::parallel_for(
      "KokkosAttn::naive::store_out",
      kokkos_common::light_launch(
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, a.B * TT * N * Hv)),
      KOKKOS_LAMBDA(const Index e) {
        const Index c = e % Hv, n = (e / Hv) % N, i = (e / (Hv * N)) % TT, b = e / (Hv * N * TT);
        out(b, i, n, c) = Traits::store(oh[((b * N + n) * TT + i) * Hv + c]);
      });
}

} // namespace kattn::naive::detail
