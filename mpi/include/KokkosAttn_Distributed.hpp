// KokkosAttn::Distributed::sdpa: exact attention over a sequence split across the ranks of an MPI
// communicator (context parallelism, issue 26; docs/scale-out.md). Each rank passes its local
// slice, q [B, T_local, N, H], k and v [B, T_local, K, H|Hv] for the same tokens, out
// [B, T_local, N, Hv] (and extras.lse [B, N, T_local]); `layout` says how the global sequence
// is split and which scheme shares the work. The ring: keys and values travel around the ranks
// with non-blocking MPI while each rank attends to the block in hand, and the blocks' results
// merge exactly through their LSE. The all-to-all (Ulysses): q, k, v move to head-sharded, each
// rank attends the whole sequence over N/P heads, out moves back (P must divide K).
// Collective: every rank of `comm` calls it with the same B, N, K, H, Hv, dtype, options and
// layout (checked first: a disagreement or a bad input throws the same exception on every rank).
//
// Served now, the forward: dense self-attention slices, causal or not (windows: the all-to-all),
// GQA/MQA, any dtype the local backends take, contiguous blocks of any lengths (empty included)
// or zigzag chunks; host-accessible memory (Serial, OpenMP). The backward is not here yet
// (docs/scale-out.md).
// Refused by name: windows in the ring, bias, masks, lengths, dropout, sinks, FP8, device memory (a
// GPU-aware MPI path is not built yet).
#pragma once

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ScopedRegion.hpp>

#include "KokkosAttn_DistributedLayout.hpp"
#include "KokkosAttn_ExecContext.hpp"
#include "KokkosAttn_Run.hpp"
#include "KokkosAttn_Types.hpp"

namespace KokkosAttn::Distributed {

namespace Impl {
// mpi/src/ring_forward.cpp
void ring_forward(const kattn::ExecContext& x, MPI_Comm comm, const kattn::ForwardProblem& p,
                  const Layout& layout);
// mpi/src/a2a_forward.cpp
void a2a_forward(const kattn::ExecContext& x, MPI_Comm comm, const kattn::ForwardProblem& p,
                 const Layout& layout);
} // namespace Impl

// The raw-tensor form (tensors in memory `exec` reads).
template <class ExecSpace>
void sdpa(const ExecSpace& exec, MPI_Comm comm, const kattn::ForwardProblem& local,
          const Layout& layout = {}) {
  static_assert(Kokkos::is_execution_space_v<ExecSpace>,
                "KokkosAttn::Distributed::sdpa: the first argument must be a Kokkos execution "
                "space instance");
  Kokkos::Profiling::ScopedRegion region("KokkosAttn::Distributed::sdpa");
  if (layout.scheme == Scheme::all_to_all)
    Impl::a2a_forward(make_exec_context(exec), comm, local, layout);
  else
    Impl::ring_forward(make_exec_context(exec), comm, local, layout);
}

template <class ExecSpace, class QView, class KView, class VView, class OView>
void sdpa(const ExecSpace& exec, MPI_Comm comm, const QView& q, const KView& k, const VView& v,
          const OView& out, const Options& options = {}, const Layout& layout = {},
          const Extras& extras = {}) {
  sdpa(exec, comm, KokkosAttn::Impl::forward_problem<ExecSpace>(q, k, v, out, options, extras),
       layout);
}

} // namespace KokkosAttn::Distributed
