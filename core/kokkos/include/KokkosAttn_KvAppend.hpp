// KokkosAttn::append_kv: a decode step's new keys and values into a KV cache (docs/semantics.md,
// paged_kv), paged (extras.page_table) or contiguous, on the caller's execution space; then
// extras.seqlens_k grows by T_new. A decode step is this and sdpa with the same extras:
//
//   KokkosAttn::append_kv(exec, k_new, v_new, k_cache, v_cache, extras);
//   KokkosAttn::sdpa(exec, q, k_cache, v_cache, out, options, extras);
//
// Both are enqueued on `exec` in that order (no fence).
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ScopedRegion.hpp>

#include "KokkosAttn_ExecContext.hpp"
#include "KokkosAttn_Run.hpp"
#include "KokkosAttn_Tensor.hpp"
#include "KokkosAttn_Types.hpp"
#include "kokkosattn/kv_append.hpp"

namespace KokkosAttn {

namespace Impl {
// The copy and the length update on the context's space (backends/kokkos_common/kv_append_run.cpp),
// after kattn::validate(a).
void append_kv(const kattn::ExecContext& x, const kattn::KvAppend& a);
} // namespace Impl

// The raw-tensor form (the C API's, the tests'): tensors in memory `exec` reads.
template <class ExecSpace>
void append_kv(const ExecSpace& exec, const kattn::KvAppend& a) {
  static_assert(Kokkos::is_execution_space_v<ExecSpace>,
                "KokkosAttn::append_kv: the first argument must be a Kokkos execution space");
  Kokkos::Profiling::ScopedRegion region("KokkosAttn::append_kv");
  Impl::append_kv(make_exec_context(exec), a);
}

// k_new [B, T_new, K, H], v_new [B, T_new, K, Hv]; k_cache/v_cache [num_pages, page_size, K, ..]
// with extras.page_table, else [B, S, K, ..]; extras.seqlens_k (required) the keys each sequence
// holds before the call. Only those two members of extras are read.
template <class ExecSpace, class KNew, class VNew, class KCache, class VCache>
void append_kv(const ExecSpace& exec, const KNew& k_new, const VNew& v_new, const KCache& k_cache,
               const VCache& v_cache, const Extras& extras) {
  Impl::check_view<ExecSpace, KNew>();
  Impl::check_view<ExecSpace, VNew>();
  Impl::check_view<ExecSpace, KCache>();
  Impl::check_view<ExecSpace, VCache>();
  static_assert(!std::is_const_v<typename KCache::value_type> &&
                    !std::is_const_v<typename VCache::value_type>,
                "KokkosAttn::append_kv: k_cache and v_cache must be Views of non-const elements");
  kattn::KvAppend a;
  a.k_new = as_tensor(k_new);
  a.v_new = as_tensor(v_new);
  a.k_cache = as_tensor(k_cache);
  a.v_cache = as_tensor(v_cache);
  a.page_table = extras.page_table;
  a.seqlens_k = extras.seqlens_k;
  append_kv(exec, a);
}

} // namespace KokkosAttn
