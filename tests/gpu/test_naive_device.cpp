// The naive backend on Kokkos::Cuda through device pointers, both implementations of its two
// products: the Kokkos Kernels GEMMs (one cuBLAS strided batch per product, then the
// lane-parallel row softmax that applies the score rule) and the hand-written loops, against
// the fp64 reference on the same rounded inputs (tolerances: gpu/device_check.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "common/dispatch_fixture.hpp"
#include "gpu/device_check.hpp"
#include "kokkosattn/detail/host_access.hpp"
#include "naive/naive_backend.hpp"
#include "naive/naive_forward.hpp"
#include "naive/naive_softmax.hpp"
#include "unit/test_portable_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

const BackendImpl& naive_on(naive::Products products) {
  static const auto gemm =
      naive::have_kokkos_kernels ? naive::make_naive_backend(naive::Products::gemm) : nullptr;
  static const auto loops = naive::make_naive_backend(naive::Products::loops);
  return products == naive::Products::gemm ? *gemm : *loops;
}

const char* products_name(naive::Products products) {
  return products == naive::Products::gemm ? "GEMM products" : "loop products";
}

// Both products where the build has Kokkos Kernels (the device configuration always has).
void check_naive_on_device(const Spec& spec) {
  for (naive::Products products : naive_products()) {
    INFO(products_name(products));
    check_on_device(naive_on(products), spec);
  }
}

} // namespace

TEST_CASE("naive/device: every dtype, GQA and MQA, T = 1, value head dim unlike the key's") {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    INFO(to_string(t));
    check_naive_on_device(spec_of(2, 130, 200, 4, 2, 64, 64, t));
    check_naive_on_device(spec_of(1, 70, 129, 4, 1, 128, 128, t));
    check_naive_on_device(spec_of(2, 1, 300, 2, 2, 64, 64, t));
    check_naive_on_device(spec_of(1, 33, 65, 2, 1, 96, 40, t));
  }
  Spec no_lse = spec_of(1, 40, 50, 2, 2, 64, 64);
  no_lse.lse = false;
  check_naive_on_device(no_lse);
}

TEST_CASE("naive/device: causal in both alignments, windows, rows that see no key") {
  for (DType t : {DType::f32, DType::bf16})
    for (auto [T, S] : {std::pair{130, 130}, std::pair{40, 150}, std::pair{150, 40}})
      for (Alignment a : {Alignment::top_left, Alignment::bottom_right}) {
        Spec s = spec_of(1, T, S, 2, 1, 64, 64, t);
        s.opt.causal = true;
        s.opt.alignment = a;
        INFO(to_string(t), " T=", T, " S=", S);
        check_naive_on_device(s);
      }
  Spec w = spec_of(1, 200, 230, 2, 1, 128, 128);
  w.opt.window_left = 50;
  w.opt.window_right = 7;
  w.opt.alignment = Alignment::bottom_right;
  check_naive_on_device(w);
  // A band that leaves the first rows without keys: out 0, LSE -inf (check_on_device's
  // all_finite and the reference's -inf).
  Spec band = spec_of(1, 60, 20, 2, 1, 64, 64);
  band.opt.window_left = 0;
  band.opt.window_right = 0;
  check_naive_on_device(band);
}

TEST_CASE("naive/device: bias and mask broadcasts, ALiBi, softcap, an explicit scale") {
  for (DType t : {DType::f32, DType::f64, DType::f16}) {
    Spec s = spec_of(2, 70, 90, 4, 2, 64, 64, t);
    s.bias = true;
    s.bias_bcast_b = true;
    s.bias_dtype = DType::f32;
    s.mask = true;
    s.mask_bcast_n = true;
    INFO(to_string(t));
    check_naive_on_device(s);
    Spec al = spec_of(2, 50, 60, 4, 1, 64, 64, t);
    al.alibi = 2;
    al.opt.causal = true;
    al.opt.softcap = 5.0;
    check_naive_on_device(al);
  }
  Spec sc = spec_of(1, 80, 80, 2, 1, 128, 128);
  sc.opt.scale = 0.3;
  sc.alibi = 1;
  check_naive_on_device(sc);
}

TEST_CASE("naive/device: padded batches, empty sequences, permuted storage") {
  Spec pad = spec_of(3, 100, 140, 2, 1, 64, 64);
  pad.q_lens = {100, 37, 0};
  pad.k_lens = {140, 0, 65};
  check_naive_on_device(pad);
  Spec hm = spec_of(2, 67, 69, 4, 2, 64, 64, DType::bf16);
  hm.heads_major = true;
  check_naive_on_device(hm);
  Spec o = spec_of(1, 65, 64, 2, 2, 64, 64, DType::f64);
  o.out_pad = 3;
  check_naive_on_device(o);
}

// The softmax stages a row in team scratch when it fits (4, 2 or 1 rows per team) and works in
// place past that: each way once, with rows that see no key (a staged empty row must write its
// zeros) and a narrow window.
TEST_CASE("naive/device: long rows, staged 4, 2, 1 per team and in place") {
  using naive::detail::softmax_shape;
  const std::size_t level0 = 48 << 10;
  struct Long {
    DType dtype;
    std::int64_t S;
    int rows_per_team;
    bool staged;
  };
  for (const Long& c : {Long{DType::f32, 3000, 4, true}, Long{DType::f64, 3000, 2, true},
                        Long{DType::f32, 9000, 1, true}, Long{DType::f32, 13000, 4, false},
                        Long{DType::f64, 7000, 4, false}}) {
    INFO(to_string(c.dtype), " S=", c.S);
    const auto shape =
        softmax_shape(true, c.S, c.dtype == DType::f64 ? sizeof(double) : sizeof(float), level0);
    REQUIRE(shape.rows_per_team == c.rows_per_team);
    REQUIRE(shape.staged == c.staged);
    Spec pad = spec_of(2, 6, c.S, 2, 1, 64, 64, c.dtype);
    pad.q_lens = {6, 6};
    pad.k_lens = {c.S - 5, 0}; // the second batch's rows see no key: out 0, LSE -inf
    check_naive_on_device(pad);
    Spec band = spec_of(1, 9, c.S, 2, 1, 64, 64, c.dtype);
    band.opt.window_left = 2;
    band.opt.window_right = 0; // top-left: every row sees keys i-2..i, the rest -inf
    check_naive_on_device(band);
    check_naive_on_device(spec_of(1, 5, c.S, 2, 2, 64, 64, c.dtype));
  }
}

// docs/semantics.md non_finite on the device softmax: a NaN in q makes its rows NaN (out and
// LSE), every other row comes out bit for bit as in the clean run.
TEST_CASE("naive/device: a NaN in q makes its row NaN and leaves the others alone") {
  for (naive::Products products : naive_products()) {
    INFO(products_name(products));
    Attn a(spec_of(1, 20, 30, 2, 1, 64, 64, DType::f32));
    const auto run = [&] {
      run_on_device(naive_on(products), a);
      return std::pair{a.out_values(), a.lse_values()};
    };
    const auto [clean_out, clean_lse] = run();
    const std::int64_t bad_i = 7, bad_n = 1;
    store_double(a.q.view, element_offset(a.q.view, 0, bad_i, bad_n, 3),
                 std::numeric_limits<double>::quiet_NaN());
    const auto [out, lse] = run();
    const Spec& s = a.spec;
    int wrong = 0;
    for (std::int64_t i = 0; i < s.T; ++i)
      for (std::int64_t n = 0; n < s.N; ++n) {
        const bool poisoned = i == bad_i && n == bad_n;
        for (std::int64_t h = 0; h < s.Hv; ++h) {
          const auto e = static_cast<std::size_t>((i * s.N + n) * s.Hv + h);
          wrong += poisoned ? !std::isnan(out[e]) : !(out[e] == clean_out[e]);
        }
        const auto l = static_cast<std::size_t>(n * s.T + i);
        wrong += poisoned ? !std::isnan(lse[l]) : !(lse[l] == clean_lse[l]);
      }
    CHECK(wrong == 0);
  }
}
