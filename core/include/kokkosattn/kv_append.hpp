// Appending a decode step's new keys and values to a KV cache (docs/semantics.md, paged_kv): the
// framework-free description and its validation. The copy itself runs on the caller's Kokkos
// execution space (KokkosAttn::append_kv, KokkosAttn_KvAppend.hpp), so that a decode step is
// append_kv then sdpa with the same extras, in stream order.
#pragma once

#include <cstdint>

#include "kokkosattn/tensor.hpp"

namespace kattn {

struct KvAppend {
  Tensor k_new, v_new;     // [B, T_new, K, H], [B, T_new, K, Hv]: the new tokens of each sequence
  Tensor k_cache, v_cache; // [num_pages, page_size, K, H | Hv] with page_table, else [B, S, K, ..]
  Tensor page_table;       // optional i32 [B, max_pages_per_seq] (rule paged_kv)
  Tensor seqlens_k;        // i32 [B]: keys each sequence holds; the append adds T_new to each
};

struct KvAppendDims {
  std::int64_t B = 0, T_new = 0, K = 0, H = 0, Hv = 0;
  std::int64_t S = 0;         // keys a sequence can hold (paged: max_pages_per_seq * page_size)
  std::int64_t page_size = 0; // 0: a contiguous cache
};

// Throws InvalidArgument naming the argument; reads seqlens_k and the page table only from host
// memory (there: every sequence keeps room for T_new more keys, in pages that exist).
KvAppendDims validate(const KvAppend& a);

} // namespace kattn
