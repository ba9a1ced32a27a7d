// Test helper: a paged KV cache (docs/semantics.md, paged_kv) holding the same keys and values as
// an Attn's contiguous, padded k and v, so that a paged problem's result can be judged against the
// contiguous one: its page table has S / page_size slots, so both have the same S (and bias and
// mask shapes). The pages are placed in a shuffled order among unused pages full of NaN (a
// kernel that reads a page it was not given makes NaN), unused page-table slots hold -1, and
// optionally sequence 1 shares sequence 0's first pages (prefix sharing: the contiguous k and v
// of sequence 1 are overwritten with sequence 0's keys there first, so both layouts agree).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "common/host_tensor.hpp"
#include "common/reference_problem.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn::test {

struct PagedCache {
  HostTensor k, v, page_table;
  std::int64_t page_size = 0, num_pages = 0;

  // a's forward problem reading k and v through this cache.
  ForwardProblem problem(const Attn& a) const {
    ForwardProblem p = a.forward_problem();
    p.k = k.view();
    p.v = v.view();
    p.extras.page_table = page_table.view();
    return p;
  }
};

struct PagedLayout {
  std::int64_t page_size = 16;
  std::int64_t spare_pages = 3;  // unused pages among the used ones
  std::int64_t shared_pages = 0; // sequence 1 reuses sequence 0's first pages (B >= 2)
  std::uint64_t seed = 11;
};

// a must be batched with k_lens (seqlens_k) given and S a multiple of the page size. Writes into
// a's k and v when pages are shared.
inline PagedCache make_paged(Attn& a, const PagedLayout& l) {
  const Spec& s = a.spec;
  const std::int64_t B = s.B, K = s.K, H = s.H, Hv = s.Hv, ps = l.page_size;
  const auto pages_of = [&](std::int64_t b) {
    const std::int64_t len = a.spec.k_lens[static_cast<std::size_t>(b)];
    return len / ps + (len % ps != 0);
  };
  std::vector<double> kc = read_logical(a.k.view), vc = read_logical(a.v.view);
  const auto at = [&](std::int64_t b, std::int64_t j, std::int64_t kv, std::int64_t f,
                      std::int64_t dim) {
    return static_cast<std::size_t>(((b * s.S + j) * K + kv) * dim + f);
  };
  const std::int64_t shared = B >= 2 ? std::min({l.shared_pages, pages_of(0), pages_of(1)}) : 0;
  for (std::int64_t j = 0; j < shared * ps; ++j) // sequence 1's first keys := sequence 0's
    for (std::int64_t kv = 0; kv < K; ++kv) {
      for (std::int64_t f = 0; f < H; ++f)
        kc[at(1, j, kv, f, H)] = kc[at(0, j, kv, f, H)];
      for (std::int64_t f = 0; f < Hv; ++f)
        vc[at(1, j, kv, f, Hv)] = vc[at(0, j, kv, f, Hv)];
    }
  write_logical(a.k.view, kc);
  write_logical(a.v.view, vc);

  std::int64_t used = -shared;
  for (std::int64_t b = 0; b < B; ++b)
    used += pages_of(b);
  const std::int64_t slots = s.S / ps; // (the caller's S % ps == 0)
  PagedCache c;
  c.page_size = ps;
  c.num_pages = used + l.spare_pages;
  std::vector<std::int64_t> ids(static_cast<std::size_t>(c.num_pages));
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937_64 rng(l.seed);
  std::shuffle(ids.begin(), ids.end(), rng);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> kp(static_cast<std::size_t>(c.num_pages * ps * K * H), nan);
  std::vector<double> vp(static_cast<std::size_t>(c.num_pages * ps * K * Hv), nan);
  std::vector<double> table(static_cast<std::size_t>(B * slots), -1.0);
  std::size_t next = 0;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t slot = 0; slot < pages_of(b); ++slot) {
      const bool reuse = b == 1 && slot < shared;
      const std::int64_t page =
          reuse ? static_cast<std::int64_t>(table[static_cast<std::size_t>(slot)]) : ids[next++];
      table[static_cast<std::size_t>(b * slots + slot)] = static_cast<double>(page);
      const std::int64_t len = a.spec.k_lens[static_cast<std::size_t>(b)];
      for (std::int64_t r = 0; r < ps && slot * ps + r < len; ++r)
        for (std::int64_t kv = 0; kv < K; ++kv) {
          const std::int64_t j = slot * ps + r;
          for (std::int64_t f = 0; f < H; ++f)
            kp[static_cast<std::size_t>(((page * ps + r) * K + kv) * H + f)] =
                kc[at(b, j, kv, f, H)];
          for (std::int64_t f = 0; f < Hv; ++f)
            vp[static_cast<std::size_t>(((page * ps + r) * K + kv) * Hv + f)] =
                vc[at(b, j, kv, f, Hv)];
        }
    }
  c.k = HostTensor(s.dtype, {c.num_pages, ps, K, H});
  c.v = HostTensor(s.dtype, {c.num_pages, ps, K, Hv});
  c.page_table = HostTensor(DType::i32, {B, slots});
  write_logical(c.k.view(), kp);
  write_logical(c.v.view(), vp);
  for (std::size_t i = 0; i < table.size(); ++i)
    c.page_table.set_int(static_cast<std::int64_t>(i), static_cast<std::int64_t>(table[i]));
  return c;
}

} // namespace kattn::test
