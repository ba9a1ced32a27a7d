// A KV cache append (kokkosattn/kv_append.hpp): the new tokens, the cache they go into (paged or
// contiguous), the lengths they extend; in host memory, the room and the pages they need.
#include "kokkosattn/kv_append.hpp"

#include <cstdint>

#include "checks.hpp"
#include "kokkosattn/detail/checked_size.hpp"
#include "kokkosattn/detail/host_access.hpp"

namespace kattn {

using namespace validation;

KvAppendDims validate(const KvAppend& a) {
  for (const NamedTensor& n :
       {NamedTensor{&a.k_new, "k_new"}, NamedTensor{&a.v_new, "v_new"},
        NamedTensor{&a.k_cache, "k_cache"}, NamedTensor{&a.v_cache, "v_cache"},
        NamedTensor{&a.page_table, "extras.page_table"},
        NamedTensor{&a.seqlens_k, "extras.seqlens_k"}})
    check_not_half_given(*n.t, n.name);
  check_layout(a.k_new, "k_new", {"B", "T_new", "K", "H"});
  check_layout(a.v_new, "v_new", {"B", "T_new", "K", "Hv"});
  KvAppendDims d;
  d.B = ext(a.k_new, 0), d.T_new = ext(a.k_new, 1), d.K = ext(a.k_new, 2), d.H = ext(a.k_new, 3);
  d.Hv = ext(a.v_new, 3);
  expect_extent(a.v_new, "v_new", 0, "B", d.B, "k_new");
  expect_extent(a.v_new, "v_new", 1, "T_new", d.T_new, "k_new");
  expect_extent(a.v_new, "v_new", 2, "K", d.K, "k_new");
  const bool paged = a.page_table.defined();
  const std::string why = paged ? " (a paged KV cache: extras.page_table given)" : "";
  const Names kd = paged ? Names{"num_pages", "page_size", "K", "H"} : Names{"B", "S", "K", "H"};
  const Names vd = paged ? Names{"num_pages", "page_size", "K", "Hv"} : Names{"B", "S", "K", "Hv"};
  check_layout(a.k_cache, "k_cache", kd, why);
  check_layout(a.v_cache, "v_cache", vd, why);
  for (int dim = 0; dim < 2; ++dim)
    expect_extent(a.v_cache, "v_cache", dim, kd[std::size_t(dim)], ext(a.k_cache, dim), "k_cache");
  expect_extent(a.k_cache, "k_cache", 2, "K", d.K, "k_new");
  expect_extent(a.k_cache, "k_cache", 3, "H", d.H, "k_new");
  expect_extent(a.v_cache, "v_cache", 2, "K", d.K, "k_new");
  expect_extent(a.v_cache, "v_cache", 3, "Hv", d.Hv, "v_new");
  expect_dtype(a.v_new, "v_new", a.k_new.dtype, "k_new");
  expect_dtype(a.k_cache, "k_cache", a.k_new.dtype, "k_new");
  expect_dtype(a.v_cache, "v_cache", a.k_new.dtype, "k_new");
  if (paged) {
    const Tensor& pt = a.page_table;
    if (pt.rank != 2 || ext(pt, 0) != d.B)
      fail("extras.page_table: expected shape [B, max_pages_per_seq] with B = " + str(d.B) +
           " (from k_new), got " + shape_of(pt));
    check_storage(pt, "extras.page_table", {"B", "max_pages_per_seq"});
    expect_dtype(pt, "extras.page_table", DType::i32, "");
    d.page_size = ext(a.k_cache, 1);
    if (d.page_size < 1)
      fail("k_cache: expected page_size >= 1 at dim 1, got " + a.k_cache.shape_string());
    const auto s = checked_product({ext(pt, 1), d.page_size});
    if (!s)
      fail("extras.page_table: expected max_pages_per_seq * page_size to fit in int64, got " +
           str(ext(pt, 1)) + " * " + str(d.page_size));
    d.S = *s;
  } else {
    expect_extent(a.k_cache, "k_cache", 0, "B", d.B, "k_new");
    d.S = ext(a.k_cache, 1);
  }
  const Tensor& lens = a.seqlens_k;
  if (!lens.defined())
    fail("extras.seqlens_k: expected the keys each sequence holds before the append, got none");
  if (lens.rank != 1 || ext(lens, 0) != d.B)
    fail("extras.seqlens_k: expected shape [B] = [" + str(d.B) + "], got " + shape_of(lens));
  check_storage(lens, "extras.seqlens_k", {"B"});
  expect_dtype(lens, "extras.seqlens_k", DType::i32, "");
  check_one_space({{&a.k_new, "k_new"},
                   {&a.v_new, "v_new"},
                   {&a.k_cache, "k_cache"},
                   {&a.v_cache, "v_cache"},
                   {&a.page_table, "extras.page_table"},
                   {&lens, "extras.seqlens_k"}});
  for (const auto& [t, name] :
       {std::pair{&a.k_cache, "k_cache"}, {&a.v_cache, "v_cache"}, {&lens, "extras.seqlens_k"}})
    check_no_self_alias(*t, name);
  check_disjoint({{&a.k_cache, "k_cache"}, {&a.v_cache, "v_cache"}, {&lens, "extras.seqlens_k"}},
                 {{&a.k_new, "k_new"}, {&a.v_new, "v_new"}, {&a.page_table, "extras.page_table"}});
  if (lens.space != MemorySpace::host)
    return d; // device memory: rows past the room or in a missing page are not written
  for (std::int64_t b = 0; b < d.B; ++b) {
    const std::int64_t len = load_int(lens, b * strd(lens, 0));
    if (len < 0 || len > d.S - d.T_new)
      fail("extras.seqlens_k: expected values in [0, S - T_new] = [0, " + str(d.S - d.T_new) +
           "] (room for the " + str(d.T_new) + " new keys; S = " + str(d.S) + "), got " + str(len) +
           " at index " + str(b));
    if (!paged)
      continue;
    const std::int64_t num_pages = ext(a.k_cache, 0);
    for (std::int64_t j = len; j < len + d.T_new; ++j) {
      const std::int64_t slot = j / d.page_size;
      const std::int64_t page =
          load_int(a.page_table, b * strd(a.page_table, 0) + slot * strd(a.page_table, 1));
      if (page < 0 || page >= num_pages)
        fail("extras.page_table: expected page ids in [0, num_pages) = [0, " + str(num_pages) +
             ") for the pages the new keys of sequence " + str(b) + " go to, got " + str(page) +
             " at [" + str(b) + ", " + str(slot) + "]");
    }
  }
  return d;
}

} // namespace kattn
