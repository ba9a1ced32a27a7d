// The exact merge of attention over disjoint key blocks (the ring's partial results): with
// (o_a, L_a) the rows so far and (o_b, L_b) a block's, L = log(e^L_a + e^L_b) and
// o = o_a e^(L_a - L) + o_b e^(L_b - L). A row no block has seen keeps L = -inf and o = 0; a NaN
// stays NaN (docs/semantics.md, fully_masked_rows and non_finite). Kokkos kernels on the
// caller's space; the accumulators are float (double for f64 problems).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "kokkos_common/kokkos_scalar.hpp"

namespace kattn::distributed {

template <class Acc, class Mem>
struct Accumulators {
  Kokkos::View<Acc****, Kokkos::LayoutRight, Mem> o;  // [B, T_local, N, Hv]
  Kokkos::View<Acc***, Kokkos::LayoutRight, Mem> lse; // [B, N, T_local]
};

// Merges block rows [row0, row0 + rows) of out_b [B, rows, N, Hv] (element type T, contiguous)
// and lse_b f32 [B, N, rows] into the accumulators.
template <class T, class Acc, class Mem, class ExecSpace>
void merge_block(const ExecSpace& exec, const Accumulators<Acc, Mem>& acc, const void* out_b,
                 const float* lse_b, std::int64_t row0, std::int64_t rows) {
  using Traits = KokkosAttn::Impl::scalar_traits<T>;
  const std::int64_t B = acc.o.extent(0), N = acc.o.extent(2), Hv = acc.o.extent(3);
  const auto* ob = static_cast<const T*>(out_b);
  const auto o = acc.o;
  const auto lse = acc.lse;
  Kokkos::parallel_for(
      "KokkosAttn::Distributed::merge",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3>>(exec, {0, 0, 0}, {B, N, rows}),
      KOKKOS_LAMBDA(std::int64_t b, std::int64_t n, std::int64_t i) {
        const Acc la = lse(b, n, row0 + i);
        const Acc lb = lse_b[(b * N + n) * rows + i];
        const Acc m = la > lb ? la : lb;
        // Both -inf: nothing seen yet, the row stays 0 / -inf (weights would be NaN).
        if (m == -Kokkos::Experimental::infinity_v<Acc>)
          return;
        const Acc wa = Kokkos::exp(la - m), wb = Kokkos::exp(lb - m);
        const Acc s = wa + wb;
        lse(b, n, row0 + i) = m + Kokkos::log(s);
        for (std::int64_t c = 0; c < Hv; ++c) {
          const Acc vb = Traits::load(ob[((b * rows + i) * N + n) * Hv + c]);
          o(b, row0 + i, n, c) = (o(b, row0 + i, n, c) * wa + vb * wb) / s;
        }
      });
}

// out [B, T_local, N, Hv] (element type T, contiguous) and lse f32 [B, N, T_local] from the
// accumulators.
template <class T, class Acc, class Mem, class ExecSpace>
void write_result(const ExecSpace& exec, const Accumulators<Acc, Mem>& acc, void* out, float* lse) {
  using Traits = KokkosAttn::Impl::scalar_traits<T>;
  const std::int64_t B = acc.o.extent(0), R = acc.o.extent(1), N = acc.o.extent(2),
                     Hv = acc.o.extent(3);
  auto* o_out = static_cast<T*>(out);
  const auto o = acc.o;
  const auto l = acc.lse;
  Kokkos::parallel_for(
      "KokkosAttn::Distributed::write",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3>>(exec, {0, 0, 0}, {B, R, N}),
      KOKKOS_LAMBDA(std::int64_t b, std::int64_t i, std::int64_t n) {
        for (std::int64_t c = 0; c < Hv; ++c)
          o_out[((b * R + i) * N + n) * Hv + c] = Traits::store(o(b, i, n, c));
        if (lse != nullptr)
          lse[(b * N + n) * R + i] = static_cast<float>(l(b, n, i));
      });
}

} // namespace kattn::distributed
