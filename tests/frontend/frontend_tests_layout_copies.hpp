// The front end's layout-copy tests (frontend_tests.hpp): the copied problem reaches LayoutRight's
// backend, explain() names the copies and notes what a View change would reach, and the copy
// kernels move every element size between LayoutLeft, LayoutRight and LayoutStride.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "frontend/frontend_space.hpp"
#include "kokkos_common/layout_copy.hpp"

// Layout copies exist so that other layouts run where LayoutRight does: the copied problem must
// reach the backend (and kernel) the same problem gets on LayoutRight Views. Regression
// (2026-12-02, H200): a support check that refused the copies' unplaced (null) pointers sent
// every LayoutLeft call to cudnn, and the route checks (frontend_tests_forward.hpp) still passed
// (cudnn is a GPU kernel).
KATTN_FE_TEST("layout copies: LayoutLeft and LayoutStride Views reach LayoutRight's backend") {
  const Space exec;
  Options causal;
  causal.causal = true;
  for (const Options& o : {Options{}, causal}) {
    const Outcome r = forward_case<Fast, Right, Space>(exec, 1, 256, 256, 4, 2, 128, o, 5);
    const Outcome l = forward_case<Fast, Left, Space>(exec, 1, 256, 256, 4, 2, 128, o, 6);
    const Outcome s = forward_case<Fast, Bnth, Space>(exec, 1, 256, 256, 4, 2, 128, o, 7);
    report(r, "LayoutRight");
    report(l, "LayoutLeft");
    report(s, "LayoutStride");
    INFO(r.explain << "\n" << l.explain);
    CHECK(l.backend == r.backend);
    CHECK(s.backend == r.backend);
  }
}

KATTN_FE_TEST("explain() names layout copies, and notes what a one-line View change would reach") {
  const Space exec;
  Tensor4<Fast, Left, Space> q("q", {1, 16, 2, 64}), k("k", {1, 16, 2, 64}), v("v", {1, 16, 2, 64}),
      out("out", {1, 16, 2, 64});
  const std::string e = KokkosAttn::explain(exec, q.view(), k.view(), v.view(), out.view());
  INFO(e);
  CHECK(has(e, "sdpa: backend="));
  CHECK(has(e, "row-major copies of q, k, v, out") == fast_space);
  Options no_copies;
  no_copies.allow_layout_copies = false;
  const std::string n =
      KokkosAttn::explain(exec, q.view(), k.view(), v.view(), out.view(), no_copies);
  INFO(n);
  CHECK(!has(n, "ok through row-major copies"));
  if (fast_space) // the portable backend runs them as given, and the note says what would not
    CHECK((has(n, "note: ") && has(n, "row-major")));
  if constexpr (fast_space) {
    Tensor4<float, Right, Space> q32("q", {1, 16, 2, 64}), o32("o", {1, 16, 2, 64});
    const std::string f = KokkosAttn::explain(exec, q32.view(), q32.view(), q32.view(), o32.view());
    INFO(f);
    if constexpr (wide_kernel) { // f32 on cuda's 3xTF32 kernel
      CHECK(has(f, "backend=cuda"));
      CHECK(has(f, "3xtf32"));
    } else {
      CHECK(has(f, "backend=portable"));
      CHECK((has(f, "note: ") && has(f, "bf16")));
    }
  }
}

KATTN_FE_TEST(
    "layout copies: every element size between LayoutLeft, LayoutRight and LayoutStride") {
  const Space exec;
  // Which copy kernels ran (Kokkos Tools kernel names).
  static std::vector<std::string> kernels;
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(
      [](const char* name, std::uint32_t, std::uint64_t*) { kernels.emplace_back(name); });
  const auto check = [&](auto tag, DType dt, std::uint64_t seed, std::array<std::int64_t, 4> e) {
    using E = decltype(tag);
    Tensor4<E, Left, Space> a("a", e);
    Tensor4<E, Right, Space> b("b", e), d("d", e);
    Tensor4<E, Bnth, Space> c("c", e);
    std::mt19937_64 rng(seed);
    for (std::size_t i = 0; i < a.host.extent(0); ++i)
      a.host(i) = static_cast<E>(rng());
    Kokkos::deep_copy(a.dev, a.host);
    std::vector<E> orig(std::size_t(a.numel())); // a's logical values (a is overwritten below)
    for (std::int64_t i = 0; i < a.numel(); ++i)
      orig[std::size_t(i)] = a.host(std::size_t(a.offset(i)));
    const auto tensor = [dt](const auto& t) {
      Tensor x;
      x.data = t.dev.data();
      x.dtype = dt;
      x.rank = 4;
      x.extent = t.e;
      x.stride = t.s;
      x.space = KokkosAttn::Impl::memory_space_of<typename Space::memory_space>();
      return x;
    };
    const ExecContext x = KokkosAttn::make_exec_context(exec);
    kokkos_common::copy_tensor(x, tensor(a), tensor(b)); // transpose (fastest dims differ)
    kokkos_common::copy_tensor(x, tensor(b), tensor(c)); // same fastest dim (head dim)
    kokkos_common::copy_tensor(x, tensor(c), tensor(a)); // and back to LayoutLeft
    kokkos_common::copy_tensor(x, tensor(a), tensor(d));
    exec.fence();
    Kokkos::deep_copy(b.host, b.dev);
    Kokkos::deep_copy(c.host, c.dev);
    Kokkos::deep_copy(d.host, d.dev);
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < b.numel(); ++i) {
      const E want = orig[std::size_t(i)];
      wrong += b.host(std::size_t(b.offset(i))) != want ||
               c.host(std::size_t(c.offset(i))) != want || d.host(std::size_t(d.offset(i))) != want;
    }
    INFO(to_string(dt) << " extents " << e[0] << " " << e[1] << " " << e[2] << " " << e[3]);
    CHECK(wrong == 0);
  };
  // Aligned 2- and 4-byte elements in whole 16-byte vectors on both axes take the staged register
  // blocks: not A = {b, t} of 111 elements; {1, 40, 3, 24} fills part of one tile (A = {t, n} of
  // 15 blocks of 8, B = h of 3); {1, 264, 2, 136} leaves the last tiles partial on both axes
  // (bf16: 3 tiles of 16 blocks along t, 2 of 16 along h).
  struct Shape {
    std::array<std::int64_t, 4> e;
    bool blocks;
  };
  for (const Shape& sh : {Shape{{3, 37, 5, 33}, false}, Shape{{2, 64, 3, 64}, true},
                          Shape{{1, 40, 3, 24}, true}, Shape{{1, 264, 2, 136}, true}}) {
    kernels.clear();
    check(std::uint8_t{}, DType::f8_e4m3, 1, sh.e);
    check(std::uint16_t{}, DType::bf16, 2, sh.e);
    check(std::uint32_t{}, DType::f32, 3, sh.e);
    check(std::uint64_t{}, DType::f64, 4, sh.e);
    const bool blocks = std::find(kernels.begin(), kernels.end(),
                                  "KokkosAttn::layout_copy_staged16") != kernels.end();
    CHECK(blocks == sh.blocks);
  }
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
}
