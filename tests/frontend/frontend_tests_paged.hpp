// docs/semantics.md rule paged_kv through the front end: a decode step (T = 1 and T = 4 new
// queries, GQA, causal bottom-right) whose keys live in a paged cache View [num_pages, page_size,
// K, H] of the space's memory, with extras.page_table and extras.seqlens_k as i32 Views there
// too. Judged against the f64 reference on the same keys stored contiguously, with the forward
// tolerance of frontend_case.hpp (the gather copies bits; the attention is the usual kernel's).
// A page id out of range: refused by validation where the table is host memory; on a device
// space (which validation cannot read) exactly the rows that see it come out NaN.
#pragma once

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "frontend/frontend_space.hpp"

namespace {

struct PagedDecode {
  using T = Fast;
  using Mem = typename Space::memory_space;
  static constexpr std::int64_t B = 3, N = 8, K = 2, H = 64, page = 16, slots = 6;
  static constexpr std::int64_t S = page * slots; // 96
  std::int64_t T_ = 1;
  std::vector<std::int32_t> lens = {96, 37, 0};
  std::int64_t room = 0; // keys past lens the table has pages for (append_kv)
  std::int64_t num_pages = 0;
  std::vector<std::int32_t> table;         // [B, slots], -1 where unused
  std::vector<double> qv, kc, vc;          // logical q; contiguous k and v [B, S, K, H]
  Tensor4<T, Right, Space> q, kp, vp, out; // the paged cache: [num_pages, page, K, H]
  Kokkos::View<std::int32_t**, Kokkos::LayoutRight, Mem> page_table;
  Kokkos::View<std::int32_t*, Mem> seqlens_k;

  PagedDecode(std::int64_t t, std::uint64_t seed, std::vector<std::int32_t> held = {96, 37, 0},
              std::int64_t r = 0)
      : T_(t), lens(std::move(held)), room(r) {
    std::int64_t used = 0;
    for (std::int32_t l : lens)
      used += (l + room + page - 1) / page;
    num_pages = used + 2; // two spare pages, full of NaN
    std::vector<std::int32_t> ids(static_cast<std::size_t>(num_pages));
    std::iota(ids.begin(), ids.end(), 0);
    std::mt19937_64 rng(seed);
    std::shuffle(ids.begin(), ids.end(), rng);
    table.assign(static_cast<std::size_t>(B * slots), -1);
    std::size_t next = 0;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t s = 0; s * page < lens[std::size_t(b)] + room; ++s)
        table[std::size_t(b * slots + s)] = ids[next++];

    q = Tensor4<T, Right, Space>("q", {B, T_, N, H});
    out = Tensor4<T, Right, Space>("out", {B, T_, N, H});
    kp = Tensor4<T, Right, Space>("k_cache", {num_pages, page, K, H});
    vp = Tensor4<T, Right, Space>("v_cache", {num_pages, page, K, H});
    qv = q.randomize(seed + 1);
    Tensor4<T, Right, Space> kx("k", {B, S, K, H}), vx("v", {B, S, K, H});
    kc = kx.randomize(seed + 2);
    vc = vx.randomize(seed + 3);
    fill_pages(kp, kc);
    fill_pages(vp, vc);
    out.poison();
    page_table = decltype(page_table)("page_table", B, slots);
    seqlens_k = decltype(seqlens_k)("seqlens_k", B);
    upload_table();
    Kokkos::deep_copy(seqlens_k, Kokkos::View<const std::int32_t*, Kokkos::HostSpace>(
                                     lens.data(), static_cast<std::size_t>(B)));
  }

  // The cache's pages: sequence b's key j at page table[b, j / page], row j % page.
  void fill_pages(Tensor4<T, Right, Space>& cache, const std::vector<double>& contiguous) {
    Kokkos::deep_copy(cache.host, from_double<T>(std::numeric_limits<double>::quiet_NaN()));
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t j = 0; j < lens[std::size_t(b)]; ++j) {
        const std::int64_t pg = table[std::size_t(b * slots + j / page)];
        for (std::int64_t x = 0; x < K * H; ++x)
          cache.host(std::size_t((pg * page + j % page) * K * H + x)) =
              from_double<T>(contiguous[std::size_t((b * S + j) * K * H + x)]);
      }
    Kokkos::deep_copy(cache.dev, cache.host);
  }
  void upload_table() {
    Kokkos::deep_copy(page_table,
                      Kokkos::View<const std::int32_t**, Kokkos::LayoutRight, Kokkos::HostSpace>(
                          table.data(), B, slots));
  }
  Extras extras() const {
    Extras e;
    e.page_table = page_table;
    e.seqlens_k = seqlens_k;
    return e;
  }
  static Options options() {
    Options o;
    o.causal = true;
    o.alignment = Alignment::bottom_right;
    return o;
  }
  // The f64 reference on the contiguous keys with the same lengths.
  std::vector<double> reference() const {
    std::vector<double> qd = qv, kd = kc, vd = vc;
    std::vector<double> o(static_cast<std::size_t>(B * T_ * N * H));
    std::vector<std::int32_t> l = lens;
    ForwardProblem p;
    p.q = Tensor::contiguous(qd.data(), DType::f64, {B, T_, N, H});
    p.k = Tensor::contiguous(kd.data(), DType::f64, {B, S, K, H});
    p.v = Tensor::contiguous(vd.data(), DType::f64, {B, S, K, H});
    p.out = Tensor::contiguous(o.data(), DType::f64, {B, T_, N, H});
    p.extras.seqlens_k = Tensor::contiguous(l.data(), DType::i32, {B});
    p.options = options();
    reference::forward(p, validate(p));
    return o;
  }
};

} // namespace

KATTN_FE_TEST("paged KV cache: a decode step through extras.page_table, sdpa and a Plan") {
  const Space exec;
  for (const std::int64_t t : {1, 4}) {
    PagedDecode c(t, 40 + static_cast<std::uint64_t>(t));
    const std::vector<double> ref = c.reference();
    const double tol = tolerance<PagedDecode::T>(ref, 2, max_abs(c.vc));
    KokkosAttn::sdpa(exec, c.q.view(), c.kp.view(), c.vp.view(), c.out.view(),
                     PagedDecode::options(), c.extras());
    exec.fence();
    const double err = max_diff(c.out.download(), ref);
    const std::string how = KokkosAttn::explain(exec, c.q.view(), c.kp.view(), c.vp.view(),
                                                c.out.view(), PagedDecode::options(), c.extras());
    INFO("T " << t << ": err " << err << " tol " << tol << "\n" << how);
    CHECK(err <= tol);
    // portable (paged_gather) or, for bf16/f16 on a CUDA space, cuda's decode kernel serves
    // it, and says how
    CHECK((has(how, "paged_gather") || has(how, "decode_")));

    KokkosAttn::Plan<Space> plan(exec, c.q.view(), c.kp.view(), c.vp.view(), c.out.view(),
                                 PagedDecode::options(), c.extras());
    c.out.poison();
    plan.execute(c.q.view(), c.kp.view(), c.vp.view(), c.out.view());
    exec.fence();
    CHECK(max_diff(c.out.download(), ref) <= tol);
  }
}

KATTN_FE_TEST("paged KV cache: an out-of-range page id is refused on the host, NaN on a device") {
  const Space exec;
  PagedDecode c(1, 50);
  c.table[1 * PagedDecode::slots + 1] = static_cast<std::int32_t>(c.num_pages); // sequence 1
  c.upload_table();
  const bool host_table =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
  if (host_table) {
    CHECK_THROWS_WITH_AS(KokkosAttn::sdpa(exec, c.q.view(), c.kp.view(), c.vp.view(), c.out.view(),
                                          PagedDecode::options(), c.extras()),
                         doctest::Contains("extras.page_table: expected page ids"),
                         kattn::InvalidArgument);
    return;
  }
  KokkosAttn::sdpa(exec, c.q.view(), c.kp.view(), c.vp.view(), c.out.view(), PagedDecode::options(),
                   c.extras());
  exec.fence();
  const std::vector<double> got = c.out.download(), ref = c.reference();
  const std::int64_t row = PagedDecode::N * PagedDecode::H; // one sequence's T = 1 rows
  for (std::int64_t b = 0; b < PagedDecode::B; ++b) {
    bool any_nan = false, all_nan = true;
    for (std::int64_t x = b * row; x < (b + 1) * row; ++x) {
      any_nan |= std::isnan(got[std::size_t(x)]);
      all_nan &= std::isnan(got[std::size_t(x)]);
    }
    INFO("sequence " << b);
    // Sequence 1's one query sees all 37 keys, page 1 among them; sequence 2 has no keys (0).
    CHECK(any_nan == (b == 1));
    CHECK(all_nan == (b == 1));
  }
}

KATTN_FE_TEST(
    "paged KV cache: a decode step is append_kv then sdpa (paged and contiguous caches)") {
  const Space exec;
  constexpr std::int64_t T_new = 2;
  for (const bool paged : {true, false}) {
    PagedDecode c(T_new, 60, {94, 37, 0}, T_new);
    using T = PagedDecode::T;
    constexpr std::int64_t B = PagedDecode::B, K = PagedDecode::K, H = PagedDecode::H,
                           S = PagedDecode::S;
    // The new keys and values: the contiguous ones at positions lens[b], lens[b] + 1.
    Tensor4<T, Right, Space> kn("k_new", {B, T_new, K, H}), vn("v_new", {B, T_new, K, H});
    for (auto [t4, src] : {std::pair{&kn, &c.kc}, std::pair{&vn, &c.vc}}) {
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t t = 0; t < T_new; ++t)
          for (std::int64_t x = 0; x < K * H; ++x)
            t4->host(std::size_t((b * T_new + t) * K * H + x)) = from_double<T>(
                (*src)[std::size_t((b * S + c.lens[std::size_t(b)] + t) * K * H + x)]);
      Kokkos::deep_copy(t4->dev, t4->host);
    }
    // A contiguous cache [B, S, K, H] holding the first lens[b] keys (NaN past them).
    Tensor4<T, Right, Space> kx("k_cache", {B, S, K, H}), vx("v_cache", {B, S, K, H});
    for (auto [t4, src] : {std::pair{&kx, &c.kc}, std::pair{&vx, &c.vc}}) {
      Kokkos::deep_copy(t4->host, from_double<T>(std::numeric_limits<double>::quiet_NaN()));
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t j = 0; j < c.lens[std::size_t(b)] * K * H; ++j)
          t4->host(std::size_t(b * S * K * H + j)) =
              from_double<T>((*src)[std::size_t(b * S * K * H + j)]);
      Kokkos::deep_copy(t4->dev, t4->host);
    }
    Extras e = c.extras();
    if (!paged)
      e.page_table = Tensor();
    auto& kc = paged ? c.kp : kx;
    auto& vc = paged ? c.vp : vx;
    KokkosAttn::append_kv(exec, kn.view(), vn.view(), kc.view(), vc.view(), e);
    KokkosAttn::sdpa(exec, c.q.view(), kc.view(), vc.view(), c.out.view(), PagedDecode::options(),
                     e);
    exec.fence();
    std::vector<std::int32_t> grown(static_cast<std::size_t>(B));
    Kokkos::deep_copy(Kokkos::View<std::int32_t*, Kokkos::HostSpace>(grown.data(), B), c.seqlens_k);
    for (std::int64_t b = 0; b < B; ++b)
      CHECK(grown[std::size_t(b)] == c.lens[std::size_t(b)] + T_new);
    for (std::int32_t& l : c.lens)
      l += static_cast<std::int32_t>(T_new);
    const std::vector<double> ref = c.reference(); // the contiguous keys with the new lengths
    const double err = max_diff(c.out.download(), ref);
    const double tol = tolerance<T>(ref, 2, max_abs(c.vc));
    INFO((paged ? "paged" : "contiguous") << " cache: err " << err << " tol " << tol);
    CHECK(err <= tol);
  }
}
