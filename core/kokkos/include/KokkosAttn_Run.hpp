// Shared plumbing of the Kokkos entry points (sdpa, sdpa_backward, Plan): compile-time checks
// on Views, the opt-in log line, the profiling region and the exception guard.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ScopedRegion.hpp>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

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

inline bool log_enabled() {
  const char* v = std::getenv("KOKKOSATTN_LOG");
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

// Same format as dispatch's run_* log line, with the Kokkos execution space added.
inline void log_selection(const char* what, const kattn::Selection& s, kattn::DType dtype,
                          const kattn::ExecContext& x) {
  if (!log_enabled())
    return;
  const kattn::Dims& d = s.dims;
  std::ostringstream os;
  os << "[kokkos-attention] " << what << ": backend=" << kattn::to_string(s.impl->id()) << " ("
     << s.how << ") B=" << d.B << " T=" << d.T << " S=" << d.S << " N=" << d.N << " K=" << d.K
     << " H=" << d.H;
  if (d.Hv != d.H)
    os << " Hv=" << d.Hv;
  os << " dtype=" << kattn::to_string(dtype);
  if (d.packed)
    os << " varlen=packed";
  if (d.padded)
    os << " varlen=padded";
  os << " space=" << x.kokkos_space << '\n';
  std::cerr << os.str();
}

// Runs backend code inside a Kokkos profiling region named "<region>[<backend>]" (popped on
// exceptions too); non-kattn exceptions become BackendFailure naming the backend, as dispatch
// does.
template <class F>
void run_in_region(const std::string& region, const kattn::BackendImpl& impl, F&& f) {
  const std::string backend(kattn::to_string(impl.id()));
  Kokkos::Profiling::ScopedRegion scope(region + "[" + backend + "]");
  try {
    f();
  } catch (const kattn::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw kattn::BackendFailure("backend " + backend + " failed in " + region + ": " + e.what());
  }
}

} // namespace KokkosAttn::Impl
