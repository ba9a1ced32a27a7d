// The front end on two execution space instances (frontend_tests.hpp): results on each, no
// hidden fences, and a call on one does not wait for the other's work.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/frontend_space.hpp"

namespace kattn::test::frontend {

// One thread of `a` busy for a while (a dependent chain of ~2e8 FMAs: 0.1-1 s on a GPU).
inline void spin(const Space& a, const Kokkos::View<double*, typename Space::memory_space>& sink) {
  Kokkos::parallel_for(
      "frontend_test::spin", Kokkos::RangePolicy<Space>(a, 0, 1), KOKKOS_LAMBDA(int) {
        double s = 1;
        for (long i = 0; i < 200000000L; ++i)
          s = s * 1.0000001 + 1e-9;
        sink(0) = s;
      });
}

} // namespace kattn::test::frontend

KATTN_FE_TEST("two execution space instances: results on each, no hidden fences or syncs") {
  const auto parts = Kokkos::Experimental::partition_space(Space(), 1, 1);
  const Space& a = parts[0];
  const Space& b = parts[1];
  const std::int64_t B = 1, T_ = 256, N = 4, H = 64;
  Tensor4<Fast, Left, Space> qa("qa", {B, T_, N, H}), oa("oa", {B, T_, N, H}),
      qb("qb", {B, T_, N, H}), ob("ob", {B, T_, N, H});
  const auto va = qa.randomize(1), vb = qb.randomize(2);
  oa.poison();
  ob.poison();
  // Warm-up on both instances: graph builds, scratch allocation (which may synchronise).
  KokkosAttn::sdpa(a, qa.view(), qa.view(), qa.view(), oa.view());
  KokkosAttn::sdpa(b, qb.view(), qb.view(), qb.view(), ob.view());
  a.fence();
  b.fence();
  oa.poison();
  ob.poison();

  static std::vector<std::uint32_t> fences;
  fences.clear();
  Kokkos::Tools::Experimental::set_begin_fence_callback(
      [](const char*, std::uint32_t dev, std::uint64_t*) { fences.push_back(dev); });
  KokkosAttn::sdpa(a, qa.view(), qa.view(), qa.view(), oa.view());
  KokkosAttn::sdpa(b, qb.view(), qb.view(), qb.view(), ob.view());
  Kokkos::Tools::Experimental::set_begin_fence_callback(nullptr);
  const std::string how = KokkosAttn::explain(b, qb.view(), qb.view(), qb.view(), ob.view());
  INFO(how);
  if (fast_space) {
    CHECK(fences.empty()); // the GPU kernel path, layout copies included, never fences
  } else {
    // The Kokkos backends wait for their own instance only (to release temporaries).
    const std::uint32_t ida = Kokkos::Tools::Experimental::device_id(a);
    const std::uint32_t idb = Kokkos::Tools::Experimental::device_id(b);
    for (std::uint32_t id : fences)
      CHECK((id == ida || id == idb));
  }
  a.fence();
  b.fence();
  const Options none;
  const auto ra = reference_forward({qa.e, qa.e, qa.e, 4, {}, {}}, va, va, va, none);
  const auto rb = reference_forward({qb.e, qb.e, qb.e, 4, {}, {}}, vb, vb, vb, none);
  CHECK(max_diff(oa.download(), ra) <= tolerance<Fast>(ra, 2, max_abs(va)));
  CHECK(max_diff(ob.download(), rb) <= tolerance<Fast>(rb, 2, max_abs(vb)));

  if constexpr (!Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible) {
    // A call on b must not wait for a's work (a device-wide synchronisation would): while a
    // spins for ~0.2-1 s, sdpa on b returns to the host at once.
    Kokkos::View<double*, typename Space::memory_space> sink("sink", 1);
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    spin(a, sink);
    a.fence();
    const double t_spin = std::chrono::duration<double>(Clock::now() - t0).count();
    spin(a, sink);
    const auto t1 = Clock::now();
    KokkosAttn::sdpa(b, qb.view(), qb.view(), qb.view(), ob.view());
    const double t_call = std::chrono::duration<double>(Clock::now() - t1).count();
    a.fence();
    b.fence();
    INFO("a spins " << t_spin << " s; sdpa on b returned after " << t_call << " s");
    CHECK(t_spin > 0.05);
    CHECK(t_call < 0.5 * t_spin);
  }
}
