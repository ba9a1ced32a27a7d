// The naive forward's row softmax on GPUs for rows that fit in registers and whose score rule is
// the window alone (no bias, boolean mask, ALiBi or softcap): the common case, the codelab's.
// One row per warp (wavefront), each lane holding its share of the row in registers, read with
// vector loads (W scores per load): the matrix is read once and written once, and between the
// two each score costs its mask test, its max, its exp and its scale. The staged kernel of
// naive_softmax.hpp, which serves every rule, spent ~150 instructions per score on the H100
// (ncu: instruction bound at 1.2 TB/s): 64-bit indices, the general rule per score, three
// passes through shared memory.
//
// The lane's values live across three vector-range constructs (max, sum, scale): on GPU
// backends each vector lane is a hardware thread and ThreadVectorRange(team, lanes) gives lane v
// exactly the index v in every construct, so an array of the team-thread scope is the lane's
// own. This path is for GPU spaces only (naive_softmax.hpp chooses it).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

#include "kokkos_common/light_launch.hpp"
#include "kokkos_common/unroll.hpp"
#include "naive/naive_params.hpp"
#include "naive/naive_softmax_row.hpp"

namespace kattn::naive::detail {

// Scores a lane holds: up to 64 fp32 or 32 fp64 values (64 registers), so a row of up to 2048
// fp32 / 1024 fp64 scores fits a warp of 32; rows of up to a quarter of that take the short
// form, whose few registers keep a full SM of teams resident (the long form runs 4 teams of 128
// threads per SM, which left the short rows of T = 256 latency bound: 24 us for 16 MB).
template <class Acc>
inline constexpr int held_per_lane = static_cast<int>(256 / sizeof(Acc));
template <class Acc>
inline constexpr int held_per_lane_short = held_per_lane<Acc> / 4;

// W consecutive scores, loaded and stored as one vector access (16 bytes at W = 16 / sizeof).
template <class Acc, int W>
struct alignas(sizeof(Acc) * W) ScoreVec {
  Acc v[W];
};

// How rows of S scores at `data` are held: the vector width (16-byte vectors when every row
// start is aligned to them, else one score per access; 0 when a row does not fit the lanes'
// registers) and the values a lane holds (held_per_lane or held_per_lane_short).
struct HeldShape {
  int width = 0;
  int per_lane = 0;
};

template <class Acc>
HeldShape held_shape(Index S, int lanes, const void* data) {
  if (S > static_cast<Index>(held_per_lane<Acc>) * lanes)
    return {};
  constexpr int wide = static_cast<int>(16 / sizeof(Acc));
  const bool aligned = S % wide == 0 && reinterpret_cast<std::uintptr_t>(data) % 16 == 0;
  const bool short_rows = S <= static_cast<Index>(held_per_lane_short<Acc>) * lanes;
  return {aligned ? wide : 1, short_rows ? held_per_lane_short<Acc> : held_per_lane<Acc>};
}

// Rows of scale * q.k in place -> their softmax with the window rule of a; the LSE where asked.
template <int W, int PerLane, class ExecSpace, class Acc, class Mem>
void held_rows(const ExecSpace& exec, const Params& a, Acc* scores) {
  // At most 128 registers per thread (a team is 128 threads on CUDA, 256 on HIP's 64 lanes): the
  // held row takes 64, and without the bound nvcc gave 254, two teams per SM.
  using Policy =
      Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<Index>, Kokkos::LaunchBounds<256, 2>>;
  using Member = typename Policy::member_type;
  using Vec = ScoreVec<Acc, W>;
  constexpr int C = PerLane / W;   // vectors a lane holds
  constexpr int rows_per_team = 4; // 4 warps per block: no shared memory to budget
  const Index rows = a.B * a.N * a.T;
  const int lanes = Policy::vector_length_max();
  const int S = static_cast<int>(a.S); // <= PerLane * lanes (held_shape)
  const Index teams = (rows + rows_per_team - 1) / rows_per_team;
  Kokkos::parallel_for(
      "KokkosAttn::naive::softmax_held",
      kokkos_common::light_launch(Policy(exec, teams, rows_per_team, lanes)),
      KOKKOS_LAMBDA(const Member& team) {
        const Index row = team.league_rank() * rows_per_team + team.team_rank();
        if (row >= rows)
          return;
        const Acc inf = Kokkos::Experimental::infinity_v<Acc>;
        const Index i = row % a.T, n = (row / a.T) % a.N, b = row / (a.T * a.N);
        // The visible keys of the row as one interval (the window rule), within [0, S].
        const MaskRule rule = rule_of(a, b);
        int lo = 0, hi = 0;
        if (i < rule.q_len) {
          const IndexRange<Index> keys = rule.row_keys(i);
          const auto clamp = [&](Index x) {
            return static_cast<int>(x < 0 ? 0 : x > a.S ? a.S : x);
          };
          lo = clamp(keys.lo);
          hi = clamp(keys.hi);
        }
        Acc* p = scores + row * a.S;
        Vec x[C]; // the lane's scores, vector c from key (c * lanes + v) * W
        Acc m;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, lanes),
            [&](const int v, Acc& mx) {
              // Every load first (C in flight per lane), then the rule and the max in place.
              KATTN_UNROLL
              for (int c = 0; c < C; ++c) {
                const int j = (c * lanes + v) * W;
                if (j < S)
                  x[c] = *reinterpret_cast<const Vec*>(p + j);
              }
              KATTN_UNROLL
              for (int c = 0; c < C; ++c)
                KATTN_UNROLL
              for (int w = 0; w < W; ++w) {
                const int j = (c * lanes + v) * W + w;
                // Not visible, or past the row: -inf (exp gives the weight 0). A NaN score
                // stays NaN and is left out of the max; its exp makes the sum NaN, and so the
                // row (docs/semantics.md non_finite), as in naive_softmax.hpp.
                const Acc s = j >= lo && j < hi ? x[c].v[w] : -inf;
                x[c].v[w] = s;
                mx = s > mx ? s : mx;
              }
            },
            Kokkos::Max<Acc>(m));
        const Acc shift = row_shift(m); // naive_softmax_row.hpp
        Acc sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, lanes),
            [&](const int v, Acc& sv) {
              KATTN_UNROLL
              for (int c = 0; c < C; ++c)
                if ((c * lanes + v) * W < S)
                  KATTN_UNROLL
              for (int w = 0; w < W; ++w) {
                const Acc e = Kokkos::exp(x[c].v[w] - shift);
                x[c].v[w] = e;
                sv += e;
              }
            },
            sum);
        const Acc inv = sum == 0 ? Acc(0) : Acc(1) / sum;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lanes), [&](const int v) {
          KATTN_UNROLL
          for (int c = 0; c < C; ++c) {
            const int j = (c * lanes + v) * W;
            if (j < S) {
              Vec t;
              KATTN_UNROLL
              for (int w = 0; w < W; ++w)
                t.v[w] = x[c].v[w] * inv;
              *reinterpret_cast<Vec*>(p + j) = t;
            }
          }
        });
        Kokkos::single(Kokkos::PerThread(team), [&] { store_lse(a, b, n, i, shift, sum); });
      });
}

// The kernel for `held` (held_shape, width > 0).
template <class ExecSpace, class Acc, class Mem>
void softmax_rows_held(const ExecSpace& exec, const Params& a, Acc* scores, HeldShape held) {
  constexpr int wide = static_cast<int>(16 / sizeof(Acc));
  constexpr int full = held_per_lane<Acc>, quarter = held_per_lane_short<Acc>;
  const bool short_rows = held.per_lane == quarter;
  if (held.width == wide)
    return short_rows ? held_rows<wide, quarter, ExecSpace, Acc, Mem>(exec, a, scores)
                      : held_rows<wide, full, ExecSpace, Acc, Mem>(exec, a, scores);
  return short_rows ? held_rows<1, quarter, ExecSpace, Acc, Mem>(exec, a, scores)
                    : held_rows<1, full, ExecSpace, Acc, Mem>(exec, a, scores);
}

} // namespace kattn::naive::detail
