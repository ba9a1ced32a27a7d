// Test helper: run the reference on a Spec and compare every output with the fp64 oracle, and
// central finite differences of the reference forward against its backward.
#pragma once

#include <doctest/doctest.h>

#include <random>

#include "common/oracle_attention.hpp"

namespace kattn::test {

// f64 reference vs f64 oracle: the two differ only in summation order, so the relative error
// is a few ulps times the row length; 1e-12 leaves ~1000x headroom and still catches any
// formula error (those are O(1e-3) or larger). LSE is stored in f32: 2^-24 relative rounding,
// so 1e-6 relative to max(1, |lse|).
inline void check_against_oracle(const Spec& spec, bool grads = true, double tol = 1e-12) {
  Attn a(spec);
  a.forward();
  const OracleResult o = oracle(a);
  const std::vector<double> out = a.out_values();
  CHECK(all_finite(out));
  CHECK(rel_err(out, o.out) <= tol);
  if (spec.lse)
    CHECK(rel_err(a.lse_values(), o.lse) <= 1e-6);
  if (!grads)
    return;
  a.backward(spec.bias);
  CHECK(rel_err(read_logical(a.dq.view), o.dq) <= tol);
  CHECK(rel_err(read_logical(a.dk.view), o.dk) <= tol);
  CHECK(rel_err(read_logical(a.dv.view), o.dv) <= tol);
  // dbias is stored in the bias dtype: f32 rounds at 2^-24 relative.
  if (spec.bias)
    CHECK(rel_err(a.dbias.to_doubles(), o.dbias) <= (spec.bias_dtype == DType::f64 ? tol : 1e-6));
}

// L = sum(out ∘ dout): its gradient is what backward computes with dout as the upstream grad.
inline double loss(Attn& a) {
  a.forward();
  const std::vector<double> out = a.out_values(), w = read_logical(a.dout.view);
  double l = 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    l += out[i] * w[i];
  return l;
}

// Central differences with step 1e-6 in f64: truncation error ~h^2 = 1e-12, cancellation
// error ~eps*|L|/h ~ 1e-9 for |L| ~ 10; the tolerance 1e-6 * max(1, |g|) sits far above both
// and far below any real gradient error. Checks up to `samples` elements per tensor (all
// when the tensor is smaller), always including the first and last.
inline void check_finite_differences(const Spec& spec, int samples = 48) {
  REQUIRE(spec.dtype == DType::f64);
  Attn a(spec);
  a.backward(spec.bias);
  struct Input {
    const char* name;
    Tensor t;
    std::vector<double> grad;
  };
  std::vector<Input> inputs = {{"q", a.q.view, read_logical(a.dq.view)},
                               {"k", a.k.view, read_logical(a.dk.view)},
                               {"v", a.v.view, read_logical(a.dv.view)}};
  if (spec.bias)
    inputs.push_back({"bias", a.bias.view(), a.dbias.to_doubles()});
  const double h = 1e-6;
  std::mt19937_64 rng(spec.seed + 99);
  for (Input& in : inputs) {
    CHECK(all_finite(in.grad));
    // All-zero gradients would make every comparison below vacuous.
    CHECK(max_abs_diff(in.grad, std::vector<double>(in.grad.size(), 0.0)) > 1e-3);
    const std::int64_t n = in.t.numel();
    std::vector<std::int64_t> idx;
    if (n <= samples) {
      for (std::int64_t i = 0; i < n; ++i)
        idx.push_back(i);
    } else {
      idx = {0, n - 1};
      std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
      while (static_cast<int>(idx.size()) < samples)
        idx.push_back(pick(rng));
    }
    for (std::int64_t i : idx) {
      const std::int64_t off = strided_offset(in.t, i);
      const double x = load_double(in.t, off);
      store_double(in.t, off, x + h);
      const double lp = loss(a);
      store_double(in.t, off, x - h);
      const double lm = loss(a);
      store_double(in.t, off, x);
      const double fd = (lp - lm) / (2 * h), g = in.grad[static_cast<std::size_t>(i)];
      INFO(in.name, "[", i, "]: finite difference ", fd, ", backward ", g);
      CHECK(std::abs(fd - g) <= 1e-6 * std::max(1.0, std::abs(g)));
    }
  }
}

} // namespace kattn::test
