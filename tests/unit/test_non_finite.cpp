// docs/semantics.md rule non_finite (issue 20 item 8): a NaN or +inf score makes its row NaN
// (out and LSE), a -inf score is weight 0, and nothing reaches the rows that do not see the
// poisoned key. Before, a NaN in q came back as a silent 0 / -inf row on every backend (every
// max skipped it), and portable turned +inf or a NaN bias into finite rows (its exp flushed NaN
// to 0). Each case runs on every CPU backend of the build, in f32, f64 and bf16, on every host
// execution context, and compares with the same backend's run on the clean inputs: rows the
// poison does not reach must come out bit for bit the same (rows are computed independently).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "common/reference_helpers.hpp"
#include "common/reference_problem.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/validate.hpp"
#include "naive/naive_forward.hpp"
#include "test_naive_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<Backend> cpu_backends(bool backward) {
  std::vector<Backend> r;
  for (Backend b : {Backend::reference, Backend::naive, Backend::portable})
    if (default_registry().find(b) && !(backward && b == Backend::naive))
      r.push_back(b);
  return r;
}

struct Result {
  std::vector<double> out, lse;
};

Result forward_with(Attn& a, Backend b, const ExecContext& ctx) {
  poison(a.out.view);
  poison(a.lse.view());
  ForwardProblem p = a.forward_problem();
  p.options.backend = b;
  run_forward(default_registry(), p, ctx);
  return {a.out_values(), a.lse_values()};
}

void set(const Tensor& t, std::int64_t i0, std::int64_t i1, std::int64_t i2, std::int64_t i3,
         double x) {
  store_double(t, element_offset(t, i0, i1, i2, i3), x);
}

// What a row (b, i, n) must be after the poison: all NaN, unchanged, or not judged.
enum class Want { nan, same, any };
// Out column h of the row: NaN, unchanged, or not judged (rows whose Want is `nan` or `same`
// apply to every column).
using RowRule = std::function<Want(std::int64_t b, std::int64_t i, std::int64_t n)>;

std::size_t lse_at(const Spec& s, std::int64_t b, std::int64_t n, std::int64_t i) {
  return static_cast<std::size_t>((b * s.N + n) * s.T + i);
}

// Checks every row of `got` against `clean` under `want`; `column_nan(b, i, n, h)` (optional)
// marks single out elements of otherwise unchanged rows that must be NaN.
void check_rows(const Attn& a, const Result& clean, const Result& got, const RowRule& want,
                const std::function<bool(std::int64_t, std::int64_t, std::int64_t, std::int64_t)>&
                    column_nan = nullptr) {
  const Spec& s = a.spec;
  int bad = 0;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t i = 0; i < s.T; ++i)
      for (std::int64_t n = 0; n < s.N; ++n) {
        const Want w = want(b, i, n);
        if (w == Want::any)
          continue;
        const std::size_t l = lse_at(s, b, n, i);
        bool ok = w == Want::nan ? std::isnan(got.lse[l]) : got.lse[l] == clean.lse[l];
        for (std::int64_t h = 0; h < s.Hv; ++h) {
          const std::size_t o = idx4(a.out.view, b, i, n, h);
          if (w == Want::nan || (column_nan && column_nan(b, i, n, h)))
            ok = ok && std::isnan(got.out[o]);
          else
            ok = ok && got.out[o] == clean.out[o];
        }
        if (!ok && ++bad <= 3) {
          INFO("row b=", b, " i=", i, " n=", n, " expected ", w == Want::nan ? "NaN" : "unchanged",
               "; lse ", got.lse[l], " (clean ", clean.lse[l], ")");
          CHECK(ok);
        }
      }
  CHECK(bad == 0);
}

// Spec of the cases: two batches, two heads over one KV head, 100 queries and keys (portable
// tiles of several sizes, a partial last one, the causal diagonal), causal top-left.
Spec poison_spec(DType t) {
  Spec s = spec_of(2, 100, 100, 2, 1, 16, 16, t);
  s.opt.causal = true;
  return s;
}

// Runs `poison` between a clean and a poisoned forward of every backend, dtype and host
// context, and checks the rows with want(backend).
void each_forward(const std::function<void(Spec&)>& adjust,
                  const std::function<void(Attn&)>& poison_it,
                  const std::function<RowRule(Backend)>& want,
                  const std::function<bool(std::int64_t, std::int64_t, std::int64_t, std::int64_t)>&
                      column_nan = nullptr) {
  HostSpaces spaces;
  for (DType t : {DType::f32, DType::f64, DType::bf16})
    for (Backend backend : cpu_backends(false))
      for (const auto& [name, ctx] : spaces.contexts()) {
        INFO(to_string(backend), " ", to_string(t), " on ", name);
        Spec s = poison_spec(t);
        if (adjust)
          adjust(s);
        Attn a(s);
        const Result clean = forward_with(a, backend, ctx);
        REQUIRE(all_finite(clean.out));
        poison_it(a);
        const Result got = forward_with(a, backend, ctx);
        check_rows(a, clean, got, want(backend), column_nan);
      }
}

} // namespace

TEST_CASE("semantics/non_finite: a NaN in q makes its row NaN and leaves every other row") {
  each_forward(
      nullptr, [](Attn& a) { set(a.q.view, 1, 37, 1, 3, kNaN); },
      [](Backend) {
        return [](std::int64_t b, std::int64_t i, std::int64_t n) {
          return b == 1 && i == 37 && n == 1 ? Want::nan : Want::same;
        };
      });
}

TEST_CASE("semantics/non_finite: +inf in q gives a +inf score, hence a NaN row") {
  // q[0, 10, 0, 0] = +inf scores +inf every key j <= 10 with k[0, j, 0, 0] > 0 (one at least:
  // required below), -inf those with k < 0.
  each_forward(
      nullptr,
      [](Attn& a) {
        bool positive = false;
        for (std::int64_t j = 0; j <= 10; ++j)
          positive = positive || load_double(a.k.view, element_offset(a.k.view, 0, j, 0, 0)) > 0;
        REQUIRE(positive);
        set(a.q.view, 0, 10, 0, 0, kInf);
      },
      [](Backend) {
        return [](std::int64_t b, std::int64_t i, std::int64_t n) {
          return b == 0 && i == 10 && n == 0 ? Want::nan : Want::same;
        };
      });
}

TEST_CASE("semantics/non_finite: softcap maps an infinite score to a finite one") {
  HostSpaces spaces;
  for (DType t : {DType::f32, DType::f64})
    for (Backend backend : cpu_backends(false)) {
      INFO(to_string(backend), " ", to_string(t));
      Spec s = poison_spec(t);
      s.opt.softcap = 5.0;
      Attn a(s);
      set(a.q.view, 0, 10, 0, 0, kInf); // every score of the row is +-inf before the cap
      const Result got = forward_with(a, backend, ExecContext{});
      CHECK(all_finite(got.out));
      CHECK(all_finite(got.lse));
    }
}

TEST_CASE("semantics/non_finite: a NaN in k reaches the rows that see the key, and no other") {
  // Causal: rows i >= 50 see key 50, rows i < 50 do not (on portable they share its tile).
  each_forward(
      nullptr, [](Attn& a) { set(a.k.view, 1, 50, 0, 5, kNaN); },
      [](Backend) {
        return [](std::int64_t b, std::int64_t i, std::int64_t) {
          return b == 1 && i >= 50 ? Want::nan : Want::same;
        };
      });
}

TEST_CASE("semantics/non_finite: a boolean mask keeps a NaN key from the rows it hides it from") {
  // Not causal, a random mask: the rows whose mask hides key 50 stay as they were.
  const auto hides = [](const Attn& a, std::int64_t b, std::int64_t i, std::int64_t n) {
    return load_int(a.mask.view(), element_offset(a.mask.view(), b, n, i, 50)) == 0;
  };
  HostSpaces spaces;
  for (DType t : {DType::f32, DType::f64, DType::bf16})
    for (Backend backend : cpu_backends(false)) {
      INFO(to_string(backend), " ", to_string(t));
      Spec s = poison_spec(t);
      s.opt.causal = false;
      s.mask = true;
      s.mask_density = 0.5;
      Attn a(s);
      const Result clean = forward_with(a, backend, ExecContext{});
      set(a.k.view, 1, 50, 0, 5, kNaN);
      const Result got = forward_with(a, backend, ExecContext{});
      check_rows(a, clean, got, [&](std::int64_t b, std::int64_t i, std::int64_t n) {
        if (b != 1)
          return Want::same;
        return hides(a, b, i, n) ? Want::same : Want::nan;
      });
    }
}

TEST_CASE("semantics/non_finite: NaN or +inf in the bias makes its row NaN, -inf is weight 0") {
  each_forward(
      [](Spec& s) {
        s.bias = true;
        s.bias_dtype = s.dtype;
      },
      [](Attn& a) {
        set(a.bias.view(), 0, 1, 20, 5, kNaN);
        set(a.bias.view(), 1, 0, 30, 6, kInf);
        set(a.bias.view(), 1, 1, 40, 7, -kInf);
      },
      [](Backend) {
        return [](std::int64_t b, std::int64_t i, std::int64_t n) {
          if ((b == 0 && i == 20 && n == 1) || (b == 1 && i == 30 && n == 0))
            return Want::nan;
          return b == 1 && i == 40 && n == 1 ? Want::any : Want::same; // -inf: below
        };
      });
  // -inf: the row loses key 7's weight and stays finite, as the reference computes it.
  for (DType t : {DType::f32, DType::f64})
    for (Backend backend : cpu_backends(false)) {
      INFO(to_string(backend), " ", to_string(t));
      Spec s = poison_spec(t);
      s.bias = true;
      s.bias_dtype = t;
      Attn a(s);
      const Result clean = forward_with(a, Backend::reference, ExecContext{});
      set(a.bias.view(), 1, 1, 40, 7, -kInf);
      const Result want = forward_with(a, Backend::reference, ExecContext{});
      const Result got = forward_with(a, backend, ExecContext{});
      const std::size_t l = lse_at(a.spec, 1, 1, 40);
      CHECK(want.lse[l] < clean.lse[l]); // a term left the sum
      CHECK(all_finite(got.out));
      CHECK(std::abs(got.lse[l] - want.lse[l]) <= 1e-5);
      CHECK(max_abs_diff(got.out, want.out) <= tolerance_for(t, max_abs(want.out)).out);
    }
}

TEST_CASE("semantics/non_finite: a NaN in v reaches the out elements it is multiplied into") {
  // v[0, 30, 0, 2] = NaN: rows i >= 30 see key 30 with weight > 0, so column 2 of their out is
  // NaN, the other columns and the LSE unchanged. Rows i < 30 do not see it: unchanged on the
  // reference and naive's loops, unspecified on portable and naive's GEMMs (0 * NaN).
  each_forward(
      nullptr, [](Attn& a) { set(a.v.view, 0, 30, 0, 2, kNaN); },
      [](Backend backend) {
        return [backend](std::int64_t b, std::int64_t i, std::int64_t) {
          // (naive's GEMMs, like portable's tiles, multiply the weights of 0 into v too.)
          const bool whole_products = backend == Backend::portable ||
                                      (backend == Backend::naive && naive::have_kokkos_kernels);
          if (b == 0 && i < 30 && whole_products)
            return Want::any;
          return Want::same;
        };
      },
      [](std::int64_t b, std::int64_t i, std::int64_t, std::int64_t h) {
        return b == 0 && i >= 30 && h == 2;
      });
}

TEST_CASE("semantics/non_finite: an f64 bias beyond float's range weighs as on the reference") {
  // f32 inputs, an f64 bias: row 7 has -1e300 on every key (uniform weights over its 8 keys,
  // as in double; as -inf it would be a fully masked row, out 0), row 8 on key 3 only (weight
  // 0 beside finite scores). The LSE of row 7 (~-1e300) fits no fp32 tensor: out only.
  Spec s = poison_spec(DType::f32);
  s.bias = true;
  s.bias_dtype = DType::f64;
  Attn a(s);
  for (std::int64_t j = 0; j < s.S; ++j)
    set(a.bias.view(), 0, 0, 7, j, -1e300);
  set(a.bias.view(), 0, 0, 8, 3, -1e300);
  const std::vector<double> want = forward_with(a, Backend::reference, ExecContext{}).out;
  const std::vector<double> v = read_logical(a.v.view);
  for (std::int64_t h = 0; h < s.Hv; ++h) { // the reference itself: row 7 is the mean of v[0..7]
    double mean = 0;
    for (std::int64_t j = 0; j <= 7; ++j)
      mean += v[idx4(a.v.view, 0, j, 0, h)] / 8;
    CHECK(want[idx4(a.out.view, 0, 7, 0, h)] == doctest::Approx(mean).epsilon(1e-6));
  }
  HostSpaces spaces;
  for (Backend backend : {Backend::naive, Backend::portable}) {
    if (!default_registry().find(backend))
      continue;
    for (const auto& [name, ctx] : spaces.contexts()) {
      INFO(to_string(backend), " on ", name);
      const std::vector<double> got = forward_with(a, backend, ctx).out;
      CHECK(max_abs_diff(got, want) <= tolerance_for(DType::f32, max_abs(want)).out);
    }
  }
}

TEST_CASE("semantics/non_finite: the backward of a NaN row is NaN where the row reaches") {
  // q[1, 37, 1, 3] = NaN, causal: the row's dq, the dk and dv of keys 0..37 of batch 1 and the
  // row's dbias over them are NaN; batch 0 and the other dq rows stay finite. Keys the row does
  // not see: finite on the reference, unspecified on portable (0 * NaN inside a tile).
  for (DType t : {DType::f32, DType::f64})
    for (Backend backend : cpu_backends(true)) {
      INFO(to_string(backend), " ", to_string(t));
      Spec s = poison_spec(t);
      s.bias = true;
      s.bias_dtype = t;
      Attn a(s);
      set(a.q.view, 1, 37, 1, 3, kNaN);
      forward_with(a, backend, ExecContext{});
      poison(a.dq.view);
      poison(a.dk.view);
      poison(a.dv.view);
      poison(a.dbias.view());
      BackwardProblem bp = a.backward_problem(true);
      bp.forward.options.backend = backend;
      run_backward(default_registry(), bp, ExecContext{});
      const std::vector<double> dq = read_logical(a.dq.view), dk = read_logical(a.dk.view),
                                dv = read_logical(a.dv.view), db = read_logical(a.dbias.view());
      int wrong = 0;
      for (std::int64_t b = 0; b < s.B; ++b)
        for (std::int64_t i = 0; i < s.T; ++i)
          for (std::int64_t n = 0; n < s.N; ++n)
            for (std::int64_t h = 0; h < s.H; ++h) {
              const bool row = b == 1 && i == 37 && n == 1;
              wrong += row != std::isnan(dq[idx4(a.dq.view, b, i, n, h)]);
            }
      for (std::int64_t b = 0; b < s.B; ++b)
        for (std::int64_t j = 0; j < s.S; ++j)
          for (std::int64_t h = 0; h < s.H; ++h) {
            const bool seen = b == 1 && j <= 37;
            if (!seen && b == 1 && backend == Backend::portable)
              continue;
            wrong += seen != std::isnan(dk[idx4(a.dk.view, b, j, 0, h)]);
            wrong += seen != std::isnan(dv[idx4(a.dv.view, b, j, 0, h)]);
          }
      for (std::int64_t b = 0; b < s.B; ++b)
        for (std::int64_t n = 0; n < s.N; ++n)
          for (std::int64_t i = 0; i < s.T; ++i)
            for (std::int64_t j = 0; j < s.S; ++j) {
              const bool row = b == 1 && n == 1 && i == 37;
              if (row && j > 37 && backend == Backend::portable)
                continue;
              const std::size_t at = static_cast<std::size_t>(((b * s.N + n) * s.T + i) * s.S + j);
              wrong += (row && j <= 37) != std::isnan(db[at]);
            }
      CHECK(wrong == 0);
    }
}

TEST_CASE("semantics/non_finite: the keys past a padded batch's length never reach it") {
  // Batch 0 has 60 of 100 keys; its padding (keys 60..99) holds NaN in k and v. No row of batch
  // 0 sees them (docs/semantics.md padded), so nothing changes: naive's GEMMs multiply whole
  // rows of v, and its packing must zero the padding first.
  for (DType t : {DType::f32, DType::f64})
    for (Backend backend : cpu_backends(false)) {
      INFO(to_string(backend), " ", to_string(t));
      Spec s = poison_spec(t);
      s.opt.causal = false;
      s.k_lens = {60, 100};
      Attn a(s);
      const Result clean = forward_with(a, backend, ExecContext{});
      REQUIRE(all_finite(clean.out));
      for (std::int64_t j = 60; j < s.S; ++j)
        for (std::int64_t h = 0; h < s.H; ++h) {
          set(a.k.view, 0, j, 0, h, kNaN);
          set(a.v.view, 0, j, 0, h, kNaN);
        }
      const Result got = forward_with(a, backend, ExecContext{});
      check_rows(a, clean, got,
                 [](std::int64_t, std::int64_t, std::int64_t) { return Want::same; });
    }
}
