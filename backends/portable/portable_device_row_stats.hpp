// The device backward's row statistics from the caller's forward, for f32 problems that pass the
// forward's LSE (extras.lse): LSE as given and D = rowsum(dout * out) over the caller's out, into
// the [B][N][T] arrays the backward kernels read (portable_device_backward_kernel.hpp). This
// replaces the prep pass, a whole forward (a fifth of the backward's time at head dim 128),
// with one read of out and dout. 16-bit problems keep the prep pass: D over a 16-bit out would
// carry its rounding (2^-9 relative for bf16), where the prep's fp32 O carries none.
#pragma once

#include <Kokkos_Core.hpp>

#include "kokkos_common/kokkos_scalar.hpp"
#include "portable/portable_params.hpp"
#include "portable/portable_tile.hpp"

namespace kattn::portable {

template <class ExecSpace, class T>
struct DeviceRowStatsKernel {
  // A row per thread of a team, its head dim over a vector of kLanes lanes.
  static constexpr int kRows = 8, kLanes = 32;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Team = typename Policy::member_type;
  using Traits = KokkosAttn::Impl::scalar_traits<T>;
  using Acc = typename Traits::acc;

  Common c;
  Rows<const T> out, dout;
  Acc *lse_acc = nullptr, *delta = nullptr;

  static Policy policy(const ExecSpace& exec, Index rows) {
    return Policy(exec, static_cast<int>((rows + kRows - 1) / kRows), kRows, kLanes);
  }

  KOKKOS_FUNCTION void operator()(const Team& team) const {
    const Index row = Index(team.league_rank()) * kRows + team.team_rank();
    if (row >= c.B * c.N * c.T)
      return;
    const Index i = row % c.T, n = (row / c.T) % c.N, b = row / (c.T * c.N);
    const Seq sq = c.seq(b);
    const bool valid = i < sq.q_len;
    const Index tok = sq.q_tok0 + i;
    Acc d = 0;
    if (valid) {
      const T* o = out.data + out.at(b, tok, n, 0);
      const T* g = dout.data + dout.at(b, tok, n, 0);
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, c.Hv),
          [&](Index h, Acc& s) { s += Traits::load(g[h * dout.sd]) * Traits::load(o[h * out.sd]); },
          d);
    }
    Kokkos::single(Kokkos::PerThread(team), [&] {
      lse_acc[row] =
          valid ? Acc(c.lse[b * c.lse_sb + n * c.lse_sn + tok * c.lse_st]) : neg_inf<Acc>();
      delta[row] = d;
    });
  }
};

} // namespace kattn::portable
