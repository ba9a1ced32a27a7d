// Shared plumbing of the Kokkos entry points (sdpa, sdpa_backward, Plan): compile-time checks
// on Views and the profiling region around a backend run.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ScopedRegion.hpp>

#include <string>
#include <utility>

#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"

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

// Runs backend code inside a Kokkos profiling region named "<region>[<backend>]" (popped on
// exceptions too), with dispatch's exception wrapping.
template <class F>
void run_in_region(const std::string& region, const kattn::BackendImpl& impl, F&& f) {
  Kokkos::Profiling::ScopedRegion scope(region + "[" + std::string(kattn::to_string(impl.id())) +
                                        "]");
  kattn::run_guarded(impl, region, std::forward<F>(f));
}

} // namespace KokkosAttn::Impl
