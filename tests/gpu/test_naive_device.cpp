// The naive backend on Kokkos::Cuda through device pointers, both implementations of its two
// products: the Kokkos Kernels GEMMs (one cuBLAS batch per product, on the caller's fp32/fp64
// tensors or on head-major copies, then the row softmax that applies the score rule) and the
// hand-written loops, against the fp64 reference on the same rounded inputs (tolerances:
// gpu/device_check.hpp).
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

// Rows of S keys through each softmax form: padded queries and keys (the second batch's rows see
// no key: out 0, LSE -inf), a top-left band (every row sees keys i-2..i, the rest -inf), a
// bottom-right window, causal GQA.
namespace {
void check_rows_of_length(DType dtype, std::int64_t S) {
  Spec pad = spec_of(2, 7, S, 2, 1, 64, 64, dtype);
  pad.q_lens = {7, 3};
  pad.k_lens = {S - 3, 0};
  check_naive_on_device(pad);
  Spec band = spec_of(1, 9, S, 2, 1, 64, 64, dtype);
  band.opt.window_left = 2;
  band.opt.window_right = 0;
  check_naive_on_device(band);
  Spec window = spec_of(1, 9, S, 2, 1, 64, 64, dtype);
  window.opt.window_left = 3;
  window.opt.window_right = 1;
  window.opt.alignment = Alignment::bottom_right;
  check_naive_on_device(window);
  Spec causal = spec_of(1, 5, S, 4, 2, 64, 64, dtype);
  causal.opt.causal = true;
  check_naive_on_device(causal);
}
} // namespace

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
    check_rows_of_length(c.dtype, c.S);
  }
}

// Rows of the window rule alone are held in registers up to 64 fp32 / 32 fp64 scores per lane
// (a quarter of that in the short form), read as 16-byte vectors when the row length allows and
// one score at a time when not: both widths at each form's capacity, and the first length past
// the capacity (staged instead), with padded keys, rows that see no key and a band.
TEST_CASE("naive/device: rows held in registers, both widths and forms, past the capacity") {
  using naive::detail::held_shape;
  const int lanes = 32; // a CUDA warp
  alignas(16) static const double row_start[2] = {};
  struct Held {
    DType dtype;
    std::int64_t S;
    int width;    // 0: past the capacity, staged
    int per_lane; // values a lane holds
  };
  for (const Held& c :
       {Held{DType::f32, 2048, 4, 64}, Held{DType::f32, 2046, 1, 64}, Held{DType::f32, 2052, 0, 0},
        Held{DType::f32, 512, 4, 16}, Held{DType::f32, 511, 1, 16}, Held{DType::f32, 516, 4, 64},
        Held{DType::f64, 1024, 2, 32}, Held{DType::f64, 1023, 1, 32}, Held{DType::f64, 1026, 0, 0},
        Held{DType::f64, 256, 2, 8}, Held{DType::bf16, 36, 4, 16}}) {
    INFO(to_string(c.dtype), " S=", c.S);
    const auto held = c.dtype == DType::f64 ? held_shape<double>(c.S, lanes, row_start)
                                            : held_shape<float>(c.S, lanes, row_start);
    REQUIRE(held.width == c.width);
    REQUIRE(held.per_lane == c.per_lane);
    check_rows_of_length(c.dtype, c.S);
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
