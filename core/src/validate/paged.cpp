// A paged KV cache (docs/semantics.md, paged_kv): the page table's shape and dtype, the key
// capacity it gives, and the pages each sequence uses (read only from host memory, like the
// sequence lengths).
#include <cstdint>

#include "checks.hpp"
#include "kokkosattn/detail/checked_size.hpp"
#include "kokkosattn/detail/host_access.hpp"

namespace kattn::validation {

std::int64_t paged_key_capacity(const ForwardProblem& p, const Dims& d) {
  const Tensor& pt = p.extras.page_table;
  if (pt.rank != 2 || ext(pt, 0) != d.B)
    fail("extras.page_table: expected shape [B, max_pages_per_seq] with B = " + str(d.B) +
         " (from q), got " + shape_of(pt));
  check_storage(pt, "extras.page_table", {"B", "max_pages_per_seq"});
  expect_dtype(pt, "extras.page_table", DType::i32, "");
  if (d.page_size < 1)
    fail("k: expected page_size >= 1 at dim 1 (keys per page of the paged cache), got " +
         p.k.shape_string());
  const auto capacity = checked_product({ext(pt, 1), d.page_size});
  if (!capacity)
    fail("extras.page_table: expected max_pages_per_seq * page_size to fit in int64, got " +
         str(ext(pt, 1)) + " * " + str(d.page_size));
  return *capacity;
}

void check_page_ids(const ForwardProblem& p, const Dims& d) {
  const Tensor& pt = p.extras.page_table;
  const Tensor& lens = p.extras.seqlens_k;
  if (pt.space != MemorySpace::host || lens.space != MemorySpace::host)
    return; // device memory: the kernels turn a key of an out-of-range page into NaN
  const std::int64_t num_pages = ext(p.k, 0);
  for (std::int64_t b = 0; b < d.B; ++b) {
    const std::int64_t keys = load_int(lens, b * strd(lens, 0));
    const std::int64_t used = keys / d.page_size + (keys % d.page_size != 0); // <= max pages
    for (std::int64_t slot = 0; slot < used; ++slot) {
      const std::int64_t page = load_int(pt, b * strd(pt, 0) + slot * strd(pt, 1));
      if (page < 0 || page >= num_pages)
        fail("extras.page_table: expected page ids in [0, num_pages) = [0, " + str(num_pages) +
             ") for the " + str(used) + " pages sequence " + str(b) + " uses (seqlens_k[" + str(b) +
             "] = " + str(keys) + ", page_size " + str(d.page_size) + "), got " + str(page) +
             " at [" + str(b) + ", " + str(slot) + "]");
    }
  }
}

} // namespace kattn::validation
