// KokkosAttn::sdpa / sdpa_backward: scaled dot-product attention on Kokkos Views, execution space
// first. Work is enqueued on `exec` (Kokkos stream semantics): fence `exec` before reading
// results on the host. A backend fences `exec` only where it has temporaries to free (the
// portable backward, the naive score matrix, the portable forward's host K/V head copies).
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

#include "KokkosAttn_ExecContext.hpp"
#include "KokkosAttn_LayoutCopies.hpp"
#include "KokkosAttn_Run.hpp"
#include "KokkosAttn_Tensor.hpp"
#include "KokkosAttn_Types.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/problem.hpp"
#include "kokkosattn/registry.hpp"

namespace KokkosAttn {

// The front end on a problem of raw tensors in memory `exec` reads (kattn::Tensor: pointers,
// runtime dtypes, any strides), for callers without typed Views (a C API, the conformance
// runner): what the View overloads below do once they have the tensors. Dispatch may use
// layout copies; the work is enqueued on `exec` inside a KokkosAttn::sdpa[<backend>] region.
template <class ExecSpace>
void sdpa(const ExecSpace& exec, const kattn::ForwardProblem& p) {
  static_assert(Kokkos::is_execution_space_v<ExecSpace>,
                "KokkosAttn::sdpa: the first argument must be a Kokkos execution space instance");
  const kattn::ExecContext x = make_exec_context(exec);
  const kattn::Selection s =
      kattn::select(kattn::default_registry(), p, x, kattn::LayoutCopy::available);
  kattn::log_selection("sdpa", s, p.q.dtype, x);
  Impl::run_selected("KokkosAttn::sdpa", s, [&] { Impl::run_forward(s, p, x, nullptr); });
}

template <class ExecSpace>
void sdpa_backward(const ExecSpace& exec, const kattn::BackwardProblem& p) {
  static_assert(Kokkos::is_execution_space_v<ExecSpace>, "KokkosAttn::sdpa_backward: the first "
                                                         "argument must be a Kokkos execution "
                                                         "space instance");
  const kattn::ExecContext x = make_exec_context(exec);
  const kattn::Selection s =
      kattn::select(kattn::default_registry(), p, x, kattn::LayoutCopy::available);
  kattn::log_selection("sdpa_backward", s, p.forward.q.dtype, x);
  Impl::run_selected("KokkosAttn::sdpa_backward", s, [&] { Impl::run_backward(s, p, x, nullptr); });
}

// Forward: out = softmax(q k^T * scale [+ bias] [masked]) v, per docs/semantics.md.
// Rank 4 Views: q [B, T, N, H], k [B, S, K, H], v [B, S, K, Hv], out [B, T, N, Hv].
// Rank 3 Views (packed varlen, with extras.cu_seqlens_q/k): [tokens, heads, dim].
// Optional tensors (bias, mask, lengths, lse output) go in `extras`, as Views or Tensors.
// Views of any layout: when the fastest backend for the problem needs head-dim stride 1 (the
// GPU kernels do; LayoutLeft, CUDA's default, has not), q, k, v, out go through row-major
// copies on `exec` (kattn::LayoutCopies; explain() and KOKKOSATTN_LOG=1 say so). Their scratch
// is kept per (space, stream) for later calls; a Plan keeps its own.
template <class ExecSpace, class QView, class KView, class VView, class OView>
void sdpa(const ExecSpace& exec, const QView& q, const KView& k, const VView& v, const OView& out,
          const Options& options = {}, const Extras& extras = {}) {
  sdpa(exec, Impl::forward_problem<ExecSpace>(q, k, v, out, options, extras));
}

// Backward: dq, dk, dv (and dbias, dsinks when given: shaped as extras.bias, extras.sinks) from
// dout. `out` is the forward's output; extras as in the forward (lse optional).
template <class ExecSpace, class QView, class KView, class VView, class OView, class DOView,
          class DQView, class DKView, class DVView>
void sdpa_backward(const ExecSpace& exec, const QView& q, const KView& k, const VView& v,
                   const OView& out, const DOView& dout, const DQView& dq, const DKView& dk,
                   const DVView& dv, const Options& options = {}, const Extras& extras = {},
                   const Tensor& dbias = {}, const Tensor& dsinks = {}) {
  Impl::check_view<ExecSpace, QView>();
  Impl::check_view<ExecSpace, KView>();
  Impl::check_view<ExecSpace, VView>();
  Impl::check_view<ExecSpace, OView>();
  Impl::check_view<ExecSpace, DOView>();
  Impl::check_view<ExecSpace, DQView>();
  Impl::check_view<ExecSpace, DKView>();
  Impl::check_view<ExecSpace, DVView>();
  static_assert(!std::is_const_v<typename DQView::value_type> &&
                    !std::is_const_v<typename DKView::value_type> &&
                    !std::is_const_v<typename DVView::value_type>,
                "KokkosAttn::sdpa_backward: dq, dk, dv must be Views of non-const elements");
  Impl::check_rank(static_cast<int>(q.rank()), "q");
  Impl::check_rank(static_cast<int>(k.rank()), "k");
  Impl::check_rank(static_cast<int>(v.rank()), "v");
  Impl::check_rank(static_cast<int>(out.rank()), "out");
  Impl::check_rank(static_cast<int>(dout.rank()), "dout");
  Impl::check_rank(static_cast<int>(dq.rank()), "dq");
  Impl::check_rank(static_cast<int>(dk.rank()), "dk");
  Impl::check_rank(static_cast<int>(dv.rank()), "dv");

  kattn::BackwardProblem p;
  p.forward.q = as_tensor(q);
  p.forward.k = as_tensor(k);
  p.forward.v = as_tensor(v);
  p.forward.out = as_tensor(out);
  p.forward.options = options;
  p.forward.extras = extras;
  p.dout = as_tensor(dout);
  p.dq = as_tensor(dq);
  p.dk = as_tensor(dk);
  p.dv = as_tensor(dv);
  p.dbias = dbias;
  p.dsinks = dsinks;
  sdpa_backward(exec, p);
}

} // namespace KokkosAttn
