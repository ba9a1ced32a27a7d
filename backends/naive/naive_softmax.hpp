// The naive forward's row softmax, in place over the [B, N, T, S] score matrix, with the LSE
// (natural log). On a GPU each row is one thread's vector lanes (a warp on CUDA, a wavefront on
// HIP) so that a row's S scores are read coalesced; the earlier one-thread-per-row loop read
// them S apart and ran ~20x under bandwidth on the H200. On the host a row is one thread.
//
// With apply_rule the matrix holds scale * q.k (the GEMM path) and the first pass turns each
// entry into its score (softcap, bias, ALiBi; -inf where the key is not visible); without, the
// scores are already there (the loop path). Three passes: max, exp and sum, scale by 1/sum.
// On a GPU, rows whose rule is the window alone and that fit the lanes' registers are held
// there (naive_softmax_held.hpp, the common case). Other GPU rows are staged in team scratch
// (shared memory) when they fit, so that the matrix is read once and written once (the passes
// in between stay on chip): the unstaged passes read and wrote it three times (~3 GiB at the
// codelab's T = 2048). On the host, and for rows too long to stage, the passes work in place (on
// a CPU a row sits in cache; the exp is what the softmax costs, one per score either way).
// A NaN score makes its row NaN (docs/semantics.md non_finite): the max treats it as +inf, as a
// +inf score is, and exp(NaN - inf) carries it into the sum. A row without a finite score is
// empty: all zero, LSE -inf.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>

#include "kokkos_common/light_launch.hpp"
#include "naive/naive_params.hpp"
#include "naive/naive_softmax_held.hpp"
#include "naive/naive_softmax_row.hpp"

namespace kattn::naive::detail {

template <class Acc, class Mem>
using ScoreRows =
    Kokkos::View<Acc**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Rows per team and whether they are staged in team scratch, from the row length.
struct SoftmaxShape {
  int rows_per_team = 1;
  bool staged = false;
};

// Staging budget per team: a quarter of an H100/H200 SM's shared memory keeps ~4 teams (16
// warps) resident per SM for latency hiding; a longer row runs alone in its team up to the
// space's level-0 limit.
inline constexpr std::size_t staged_team_bytes = std::size_t{48} << 10;

inline SoftmaxShape softmax_shape(bool gpu, Index S, std::size_t elem, std::size_t level0_max) {
  if (!gpu)
    return {1, false};
  const std::size_t row = static_cast<std::size_t>(S) * elem;
  const std::size_t budget = std::min(staged_team_bytes, level0_max);
  for (int r = 4; r >= 1; r /= 2)
    if (row * static_cast<std::size_t>(r) <= budget)
      return {r, true};
  return {4, false};
}

// Lane v's share of a row, j = v, v + lanes, v + 2 lanes, ... < S, through use(j, x) with
// x = load(j), U loads issued before the first use (6% on the staged softmax at T = 2048 on the
// H100, which ncu shows bound by its instructions, not by memory). Every pass walks the same j
// per lane, so a lane reads back only what it wrote (no barrier between passes).
template <int U, class Load, class Use>
KOKKOS_INLINE_FUNCTION void lane_walk(Index v, Index lanes, Index S, const Load& load,
                                      const Use& use) {
  using X = decltype(load(Index(0)));
  for (Index j0 = v; j0 < S; j0 += U * lanes) {
    X x[U];
    for (int u = 0; u < U; ++u) {
      const Index j = j0 + u * lanes;
      x[u] = load(j < S ? j : j0);
    }
    for (int u = 0; u < U && j0 + u * lanes < S; ++u)
      use(j0 + u * lanes, x[u]);
  }
}

template <bool apply_rule, class ExecSpace, class Acc, class Mem>
void softmax_rows(const ExecSpace& exec, const Params& a, const ScoreRows<Acc, Mem>& scores) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<Index>>;
  using Member = typename Policy::member_type;
  using Stage = Kokkos::View<Acc*, typename ExecSpace::scratch_memory_space,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr bool gpu = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;
  const Index rows = a.B * a.N * a.T;
  if (rows == 0)
    return;
  const int lanes = gpu ? Policy::vector_length_max() : 1;
  // The common case on GPUs: the window rule alone on rows that fit the lanes' registers.
  if constexpr (gpu && apply_rule)
    if (rule_is_window_only(a))
      if (const HeldShape held = held_shape<Acc>(a.S, lanes, scores.data()); held.width > 0)
        return softmax_rows_held<ExecSpace, Acc, Mem>(exec, a, scores.data(), held);
  constexpr int U = gpu ? 8 : 1; // loads in flight per lane (lane_walk)
  const SoftmaxShape shape =
      softmax_shape(gpu, a.S, sizeof(Acc), static_cast<std::size_t>(Policy::scratch_size_max(0)));
  const int rows_per_team = shape.rows_per_team;
  const bool staged = shape.staged;
  const Index teams = (rows + rows_per_team - 1) / rows_per_team;
  auto policy = kokkos_common::light_launch(Policy(exec, teams, rows_per_team, lanes));
  if (staged)
    policy.set_scratch_size(0, Kokkos::PerTeam(Stage::shmem_size(rows_per_team * a.S)));
  Kokkos::parallel_for(
      "KokkosAttn::naive::softmax", policy, KOKKOS_LAMBDA(const Member& team) {
        const Index row = team.league_rank() * rows_per_team + team.team_rank();
        Acc* buf = &scores(row < rows ? row : 0, 0);
        // Every thread of the team takes part in the allocation.
        if (staged)
          buf = Stage(team.team_scratch(0), rows_per_team * a.S).data() + team.team_rank() * a.S;
        if (row >= rows)
          return;
        const Acc inf = Kokkos::Experimental::infinity_v<Acc>;
        const Index i = row % a.T, n = (row / a.T) % a.N, b = row / (a.T * a.N);
        const MaskRule rule = rule_of(a, b);
        const auto global = [&](const Index j) { return scores(row, j); };
        const auto staging = [&](const Index j) { return buf[j]; };
        Acc m;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, lanes),
            [&](const int v, Acc& mx) {
              lane_walk<U>(v, lanes, a.S, global, [&](const Index j, Acc x) {
                if constexpr (apply_rule)
                  x = sees(a, rule, b, n, i, j) ? score_of<Acc>(a, rule, b, n, i, j, x) : -inf;
                if (apply_rule || staged)
                  buf[j] = x;
                const Acc y = Kokkos::isnan(x) ? inf : x;
                mx = y > mx ? y : mx;
              });
            },
            Kokkos::Max<Acc>(m));
        const Acc shift = row_shift(m); // naive_softmax_row.hpp
        Acc sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, lanes),
            [&](const int v, Acc& sv) {
              lane_walk<U>(v, lanes, a.S, staging, [&](const Index j, const Acc x) {
                const Acc e = Kokkos::exp(x - shift);
                buf[j] = e;
                sv += e;
              });
            },
            sum);
        // An empty row's weights are already exp(-inf) = 0 in place; a staged one writes them.
        const Acc inv = sum == 0 ? Acc(0) : Acc(1) / sum;
        if (sum != 0 || staged)
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int v) {
            lane_walk<U>(v, lanes, a.S, staging,
                         [&](const Index j, const Acc x) { scores(row, j) = x * inv; });
          });
        Kokkos::single(Kokkos::PerThread(team), [&] { store_lse(a, b, n, i, shift, sum); });
      });
}

} // namespace kattn::naive::detail
