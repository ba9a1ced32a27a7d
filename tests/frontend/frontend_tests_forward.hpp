// The front end's forward tests (frontend_tests.hpp): sdpa and Plan on every element type and
// layout, masks, head dims, packed varlen Views, and the Kokkos backends forced.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/frontend_space.hpp"

namespace kattn::test::frontend {

// Where a problem of element type T and layout L must run on this space.
template <class T, class L>
void check_route(const Outcome& r) {
  INFO(r.explain);
  constexpr bool sixteen = !std::is_same_v<T, float> && !std::is_same_v<T, double>;
  constexpr bool kernel = (fast_space && sixteen) || wide_kernel;
  if (kernel) {
    CHECK(is_device_kernel(r.backend));
    CHECK(r.copies == std::is_same_v<L, Left>); // LayoutLeft: head-dim stride B*T*N
  } else {
    CHECK(!is_device_kernel(r.backend));
    CHECK(!r.copies);
  }
  if (fast_space && !kernel) // f32/f64 on portable on a GPU: explain() says what is faster
    CHECK(has(r.explain, "note: "));
}

template <class T, class L>
void dtype_layout_case(std::uint64_t seed) {
  const Space exec;
  const Outcome r = forward_case<T, L, Space>(exec, 2, 37, 53, 4, 2, 64, {}, seed);
  report(r, std::string(L::name) + " seed " + std::to_string(seed));
  check_route<T, L>(r);
}

template <class T>
void all_layouts(std::uint64_t seed) {
  dtype_layout_case<T, Right>(seed);
  dtype_layout_case<T, Left>(seed + 10);
  dtype_layout_case<T, Bnth>(seed + 20);
}

} // namespace kattn::test::frontend

KATTN_FE_TEST("sdpa and Plan: f32 and f64 Views of every layout, GQA, odd lengths") {
  all_layouts<float>(1);
  all_layouts<double>(100);
}

KATTN_FE_TEST("sdpa and Plan: B = 1 LayoutLeft 16-bit Views on sm90 copy the output alone") {
  // LayoutLeft with B = 1 is sequence-major (token stride 1): the sm90 kernels read q, k, v as
  // given and only out goes through a copy (kokkosattn/layout_copies.hpp copy_choices).
  if constexpr (!fast_space || !have_16bit) {
    MESSAGE("skipped: no GPU kernel space with 16-bit Views in this build");
  } else {
    const Space exec;
    const Outcome r = forward_case<BF16, Left, Space>(exec, 1, 200, 328, 2, 1, 128, {}, 11);
    report(r, "B = 1 LayoutLeft bf16");
    CHECK(is_device_kernel(r.backend));
    if (r.kernel.starts_with("sm90")) {
      CHECK(r.kernel.ends_with("_seq"));
      CHECK(r.copied == "out");
    } else {
      MESSAGE("not an sm90 device (kernel " << r.kernel << "): every tensor copied");
      CHECK(r.copied == "q, k, v, out");
    }
  }
}

KATTN_FE_TEST("sdpa and Plan: half_t and bhalf_t Views of every layout") {
  if constexpr (!have_16bit) {
    MESSAGE("skipped: this Kokkos aliases half_t and bhalf_t to float (host-only build)");
  } else {
    CHECK(
        KokkosAttn::as_tensor(Kokkos::View<F16****, typename Space::memory_space>("h", 1, 1, 1, 8))
            .dtype == DType::f16);
    CHECK(
        KokkosAttn::as_tensor(Kokkos::View<BF16****, typename Space::memory_space>("b", 1, 1, 1, 8))
            .dtype == DType::bf16);
    all_layouts<F16>(200);
    all_layouts<BF16>(300);
  }
}

KATTN_FE_TEST("masks: causal, bottom-right with fully masked rows, window, decode MQA") {
  const Space exec;
  Options causal;
  causal.causal = true;
  Options br = causal;
  br.alignment = Alignment::bottom_right;
  Options window;
  window.window_left = 8;
  window.window_right = 4;
  report(forward_case<Fast, Left, Space>(exec, 2, 64, 64, 4, 2, 64, causal, 1), "causal");
  // T > S bottom-right: the first T - S rows see no key (output 0, never NaN).
  report(forward_case<Fast, Left, Space>(exec, 1, 80, 48, 4, 4, 64, br, 2), "bottom-right T > S");
  report(forward_case<Fast, Right, Space>(exec, 2, 70, 70, 2, 1, 64, window, 3), "window");
  // Decode: one query row over a cache, 8 query heads on one KV head.
  report(forward_case<Fast, Left, Space>(exec, 3, 1, 100, 8, 1, 64, br, 4), "decode MQA");
}

KATTN_FE_TEST("head dims 96 and 128 through every layout") {
  const Space exec;
  for (std::int64_t H : {96, 128}) {
    const Outcome l = forward_case<Fast, Left, Space>(exec, 1, 40, 72, 4, 2, H, {}, H);
    report(l, "LayoutLeft H=" + std::to_string(H));
    check_route<Fast, Left>(l);
    const Outcome s = forward_case<Fast, Bnth, Space>(exec, 1, 40, 72, 4, 2, H, {}, H + 1);
    report(s, "LayoutStride H=" + std::to_string(H));
    check_route<Fast, Bnth>(s);
  }
}

namespace {

// Packed varlen: rank-3 [tokens, heads, dim] Views, cu_seqlens in the space's memory.
template <class L>
void varlen_case(std::uint64_t seed) {
  using T = Fast;
  const Space exec;
  const std::vector<std::int32_t> cu_q = {0, 5, 22, 23}, cu_k = {0, 9, 12, 42};
  const std::int64_t N = 4, K = 2, H = 64;
  Tensor4<T, L, Space> q("q", {1, 23, N, H}, 3), k("k", {1, 42, K, H}, 3), v("v", {1, 42, K, H}, 3),
      out("out", {1, 23, N, H}, 3);
  const auto qv = q.randomize(seed), kv = k.randomize(seed + 1), vv = v.randomize(seed + 2);
  out.poison();
  using IV = Kokkos::View<std::int32_t*, typename Space::memory_space>;
  IV dq("cu_q", cu_q.size()), dk("cu_k", cu_k.size());
  Kokkos::deep_copy(dq,
                    Kokkos::View<const std::int32_t*, Kokkos::HostSpace>(cu_q.data(), cu_q.size()));
  Kokkos::deep_copy(dk,
                    Kokkos::View<const std::int32_t*, Kokkos::HostSpace>(cu_k.data(), cu_k.size()));
  Extras e;
  e.cu_seqlens_q = dq; // Views convert to the extras' tensors (kattn::tensor_source)
  e.cu_seqlens_k = dk;
  e.max_seqlen_q = 17;
  e.max_seqlen_k = 30;
  Options o;
  o.causal = true;
  o.alignment = Alignment::bottom_right;
  KokkosAttn::sdpa(exec, q.view3(), k.view3(), v.view3(), out.view3(), o, e);
  exec.fence();
  const auto ref = reference_forward({q.e, k.e, v.e, 3, cu_q, cu_k}, qv, kv, vv, o);
  const double err = max_diff(out.download(), ref), tol = tolerance<T>(ref, 2, max_abs(vv));
  INFO(std::string(L::name) << ": err " << err << " tol " << tol << "\n"
                            << KokkosAttn::explain(exec, q.view3(), k.view3(), v.view3(),
                                                   out.view3(), o, e));
  CHECK(err <= tol);
}

} // namespace

KATTN_FE_TEST("varlen: packed rank-3 Views with device offsets, LayoutRight and LayoutLeft") {
  varlen_case<Right>(1);
  varlen_case<Left>(2);
}

KATTN_FE_TEST("every Kokkos backend runs on this space: naive and portable forced") {
  const Space exec;
  for (Backend b : {Backend::naive, Backend::portable}) {
    Options o;
    o.backend = b;
    const Outcome r = forward_case<float, Left, Space>(exec, 2, 19, 23, 4, 2, 32, o, 7);
    report(r, std::string(to_string(b)));
    CHECK(r.backend == b);
  }
}
