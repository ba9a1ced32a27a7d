// KokkosAttn::explain: what sdpa() would run for these Views and why, without running it: the
// backend chosen and how (layout copies, notes), then every backend's verdict.
#pragma once

#include <Kokkos_Core.hpp>

#include <string>

#include "KokkosAttn_ExecContext.hpp"
#include "KokkosAttn_Run.hpp"
#include "KokkosAttn_Tensor.hpp"
#include "KokkosAttn_Types.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/registry.hpp"

namespace KokkosAttn {

template <class ExecSpace, class QView, class KView, class VView, class OView>
std::string explain(const ExecSpace& exec, const QView& q, const KView& k, const VView& v,
                    const OView& out, const Options& options = {}, const Extras& extras = {}) {
  const kattn::ForwardProblem p = Impl::forward_problem<ExecSpace>(q, k, v, out, options, extras);
  const kattn::ExecContext x = make_exec_context(exec);
  const auto& r = kattn::default_registry();
  return "sdpa: " + kattn::format_selection(kattn::select(r, p, x, kattn::LayoutCopy::available)) +
         "\n" + kattn::format_explain(kattn::explain(r, p, x, kattn::LayoutCopy::available));
}

} // namespace KokkosAttn
