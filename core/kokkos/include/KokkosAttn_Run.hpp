// Shared plumbing of the Kokkos entry points (sdpa, sdpa_backward, Plan): compile-time checks
// on Views and the profiling region around a backend run.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ScopedRegion.hpp>

#include <string>
#include <type_traits>
#include <utility>

#include "KokkosAttn_Tensor.hpp"
#include "KokkosAttn_Types.hpp"

#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/problem.hpp"

namespace KokkosAttn::Impl {

template <class ExecSpace, class View>
constexpr void check_view() {
  static_assert(Kokkos::is_execution_space_v<ExecSpace>,
                "KokkosAttn: the first argument must be a Kokkos execution space instance");
  static_assert(Kokkos::is_view_v<View>, "KokkosAttn: q, k, v, out (and gradients) must be "
                                         "Kokkos::Views");
  static_assert(
      Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
      "KokkosAttn: a View's memory space is not accessible from the execution space passed "
      "first (e.g. a HostSpace View with a device execution space); deep_copy it first");
}

// Runtime so that the message can name the argument (static ranks are checked here too).
inline void check_rank(int rank, const char* name) {
  if (rank != 3 && rank != 4)
    throw kattn::InvalidArgument(std::string("KokkosAttn: ") + name +
                                 ": expected a rank 4 View (batched [B, T|S, heads, dim]) or "
                                 "rank 3 View (packed varlen [tokens, heads, dim]), got rank " +
                                 std::to_string(rank));
}

// The forward problem of Views (checked at compile time, ranks at run time) and options.
template <class ExecSpace, class QView, class KView, class VView, class OView>
kattn::ForwardProblem forward_problem(const QView& q, const KView& k, const VView& v,
                                      const OView& out, const Options& options,
                                      const Extras& extras) {
  check_view<ExecSpace, QView>();
  check_view<ExecSpace, KView>();
  check_view<ExecSpace, VView>();
  check_view<ExecSpace, OView>();
  static_assert(!std::is_const_v<typename OView::value_type>,
                "KokkosAttn: out must be a View of non-const elements");
  check_rank(static_cast<int>(q.rank()), "q");
  check_rank(static_cast<int>(k.rank()), "k");
  check_rank(static_cast<int>(v.rank()), "v");
  check_rank(static_cast<int>(out.rank()), "out");
  kattn::ForwardProblem p;
  p.q = as_tensor(q);
  p.k = as_tensor(k);
  p.v = as_tensor(v);
  p.out = as_tensor(out);
  p.options = options;
  p.extras = extras;
  return p;
}

// "<region>[<backend>]", a vendor library tagged as Kokkos Kernels tags its TPLs
// ("KokkosAttn::sdpa[TPL_CUDNN]", as "KokkosBlas::gemm[TPL_CUBLAS,...]"); our own backends by name.
inline std::string region_name(const std::string& region, kattn::Backend b) {
  const std::string tag =
      b == kattn::Backend::cudnn ? "TPL_CUDNN" : std::string(kattn::to_string(b));
  return region + "[" + tag + "]";
}

// Runs backend code inside that Kokkos profiling region (popped on exceptions too), with
// dispatch's exception wrapping.
template <class F>
void run_in_region(const std::string& region, const kattn::BackendImpl& impl, F&& f) {
  Kokkos::Profiling::ScopedRegion scope(region_name(region, impl.id()));
  kattn::run_guarded(impl, region, std::forward<F>(f));
}

// The selected backend in its region; nothing for a problem that writes nothing
// (Selection::empty: docs/semantics.md rule empty).
template <class F>
void run_selected(const std::string& region, const kattn::Selection& s, F&& f) {
  if (!s.empty)
    run_in_region(region, *s.impl, std::forward<F>(f));
}

} // namespace KokkosAttn::Impl
