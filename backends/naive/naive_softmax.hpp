// The naive forward's row softmax, in place over the [B, N, T, S] score matrix, with the LSE
// (natural log). On a GPU each row is one thread's vector lanes (a warp on CUDA, a wavefront on
// HIP) so that a row's S scores are read coalesced; the earlier one-thread-per-row loop read
// them S apart and ran ~20x under bandwidth on the H200. On the host a row is one thread.
//
// With apply_rule the matrix holds scale * q.k (the GEMM path) and the first pass turns each
// entry into its score (softcap, bias, ALiBi; -inf where the key is not visible) and writes it
// back; without, the scores are already there (the loop path).
// One exp per score (the second pass stores it): on a CPU the exp is what the softmax costs.
// A NaN score makes its row NaN (docs/semantics.md non_finite): the max treats it as +inf, as a
// +inf score is, and exp(NaN - inf) carries it into the sum. A row without a finite score is
// empty: all zero, LSE -inf.
#pragma once

#include <Kokkos_Core.hpp>

#include "naive/naive_params.hpp"

namespace kattn::naive::detail {

template <class Acc, class Mem>
using ScoreRows =
    Kokkos::View<Acc**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <bool apply_rule, class ExecSpace, class Acc, class Mem>
void softmax_rows(const ExecSpace& exec, const Params& a, const ScoreRows<Acc, Mem>& scores) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<Index>>;
  using Member = typename Policy::member_type;
  constexpr bool gpu = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;
  const Index rows = a.B * a.N * a.T;
  if (rows == 0)
    return;
  const int lanes = gpu ? Policy::vector_length_max() : 1;
  const int rows_per_team = gpu ? 4 : 1;
  const Index teams = (rows + rows_per_team - 1) / rows_per_team;
  Kokkos::parallel_for(
      "KokkosAttn::naive::softmax", Policy(exec, teams, rows_per_team, lanes),
      KOKKOS_LAMBDA(const Member& team) {
        const Index row = team.league_rank() * rows_per_team + team.team_rank();
        if (row >= rows)
          return;
        const Acc inf = Kokkos::Experimental::infinity_v<Acc>;
        const Index i = row % a.T, n = (row / a.T) % a.N, b = row / (a.T * a.N);
        const MaskRule rule = rule_of(a, b);
        Acc m;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, a.S),
            [&](const Index j, Acc& mx) {
              Acc x = scores(row, j);
              if constexpr (apply_rule) {
                x = sees(a, rule, b, n, i, j) ? score_of<Acc>(a, rule, b, n, i, j, x) : -inf;
                scores(row, j) = x;
              }
              const Acc y = Kokkos::isnan(x) ? inf : x;
              mx = y > mx ? y : mx;
            },
            Kokkos::Max<Acc>(m));
        // A row without a visible key leaves m at Kokkos::Max's identity: -inf in Kokkos 5, the
        // lowest finite value in Kokkos 4. Such a row is told by its sum, whatever the identity
        // (exp(-inf - shift) = 0; a row with a visible key sums to >= 1, its maximum's exp(0)).
        const Acc shift = m == -inf ? Acc(0) : m;
        Acc sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, a.S),
            [&](const Index j, Acc& s) {
              const Acc e = Kokkos::exp(scores(row, j) - shift);
              scores(row, j) = e;
              s += e;
            },
            sum);
        float* lse = static_cast<float*>(a.lse.data);
        const Index lse_at =
            lse ? b * a.lse.stride[0] + n * a.lse.stride[1] + i * a.lse.stride[2] : 0;
        if (sum == 0) { // every weight is already exp(-inf) = 0
          if (lse)
            Kokkos::single(Kokkos::PerThread(team),
                           [&] { lse[lse_at] = -Kokkos::Experimental::infinity_v<float>; });
          return;
        }
        const Acc inv = Acc(1) / sum;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, a.S),
                             [&](const Index j) { scores(row, j) *= inv; });
        if (lse)
          Kokkos::single(Kokkos::PerThread(team),
                         [&] { lse[lse_at] = static_cast<float>(shift + Kokkos::log(sum)); });
      });
}

} // namespace kattn::naive::detail
