// Test helper for the portable backend: runs it on every host execution context (outputs
// poisoned with NaN before each run) and judges it against the reference computed in fp64 from
// the same (possibly low-precision) inputs.
//
// Forward tolerance, BRIEF.md's rule: where the naive backend (same precision, same inputs)
// serves the problem, max|portable - ref| <= 2 * max|naive - ref| + floor(dtype). Where it does
// not (packed varlen, dropout), and for every gradient (naive has no backward), an absolute
// tolerance justified in tolerance comments below.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kokkosattn/builtin_backends.hpp"
#include "kokkosattn/validate.hpp"
#include "test_naive_helpers.hpp"

namespace kattn::test {

// Floors of the 2x-naive rule. Both backends round the same inputs; they differ in summation
// order, in the online rescaling (one extra multiply per tile) and in portable's exp (<= 1 ulp
// from expf), so the floor is a few fp32 ulps of outputs of magnitude ~1-3:
// f64 1e-12 (double everywhere), f32 2e-6, f16/bf16 2e-6 plus one ulp of the largest output
// because a value near a rounding boundary may round the other way.
inline double forward_floor(DType t, double max_ref) {
  switch (t) {
  case DType::f64:
    return 1e-12;
  case DType::f16:
    return std::ldexp(max_ref, -11) + 2e-6;
  case DType::bf16:
    return std::ldexp(max_ref, -8) + 2e-6;
  default:
    return 2e-6;
  }
}

// Gradient tolerances relative to max(1, max|ref|) (no same-precision baseline exists):
// - f64: double everywhere, errors ~1e-15 relative; 1e-10 leaves room for long sums.
// - f32: every gradient is a sum over up to ~1000 keys/rows of products of fp32-rounded
//   scores (q.k of H terms, ~1e-6 relative) and fp32 products: a few 1e-6 relative; 5e-5
//   keeps >5x headroom while a wrong term (dropout factor, softcap derivative, D) costs >1e-2.
// - f16 / bf16: one ulp of the largest gradient (2^-10 / 2^-7) from rounding the result, plus
//   the fp32 part.
inline double gradient_tol(DType t, double max_ref) {
  const double m = std::max(1.0, max_ref);
  switch (t) {
  case DType::f64:
    return 1e-10 * m;
  case DType::f16:
    return std::ldexp(max_ref, -10) + 5e-5 * m;
  case DType::bf16:
    return std::ldexp(max_ref, -7) + 5e-5 * m;
  default:
    return 5e-5 * m;
  }
}

// Absolute forward tolerance where naive cannot serve the problem: the same reasoning as the
// naive tests' tolerance_for (fp32 ~1e-7 errors, one output ulp for f16/bf16), doubled.
inline double forward_abs_tol(DType t, double max_ref) {
  return 2 * tolerance_for(t, max_ref).out;
}

inline const BackendImpl& portable_backend() {
  static const auto b = portable::make_portable_backend();
  return *b;
}

struct ForwardErrors {
  double out = 0, lse = 0;
};

// Runs the portable forward of p (lo's problem, or one reading lo's outputs) on `ctx` with lo's
// outputs poisoned first.
inline void run_portable_on(Attn& lo, const ForwardProblem& p, const ExecContext& ctx) {
  const Dims d = validate(p);
  poison(lo.out.view);
  poison(lo.lse.view());
  const Support s = portable_backend().supports(p, d, ctx);
  INFO("portable support: ", s.reason);
  REQUIRE(s.ok);
  portable_backend().forward(p, d, ctx);
}

// Runs the portable forward on `ctx` with poisoned outputs; returns the errors against truth.
inline ForwardErrors run_portable_forward(Attn& lo, const ExecContext& ctx, const Truth& truth) {
  run_portable_on(lo, lo.forward_problem(), ctx);
  const std::vector<double> out = lo.out_values();
  CHECK(std::none_of(out.begin(), out.end(), [](double x) { return std::isnan(x); }));
  ForwardErrors e;
  e.out = max_abs_diff(out, truth.out);
  if (lo.spec.lse)
    e.lse = max_abs_diff(lo.lse_values(), truth.lse);
  return e;
}

struct ForwardTolerance {
  double out = 0, lse = 0;
};

// The forward tolerances of a problem, BRIEF.md's rule: 2x the same-precision naive error on the
// host (the larger of its two products' implementations) plus forward_floor where naive serves the
// problem, else forward_abs_tol (lse: fp32 LSE, ulps of |lse| plus fp32 accumulation). Runs naive
// on lo's host tensors (poisoned first).
inline ForwardTolerance forward_tolerance(Attn& lo, const Truth& truth) {
  const double max_ref = max_abs(truth.out);
  const double lse_scale = std::max(1.0, max_abs(truth.lse));
  const ForwardProblem p = lo.forward_problem();
  const Dims d = validate(p);
  ForwardTolerance t{forward_abs_tol(lo.spec.dtype, max_ref), 1e-5 * lse_scale};
  // The larger error of naive's two implementations: its BLAS GEMMs keep several partial sums
  // per score, its loops (like portable) sum the H products in sequence, which at H = 64 with
  // q x5, k x3 (f32) cost 2.4x the GEMMs' error (2.1e-5 against 8.9e-6; portable's 2.4e-5).
  double naive_out = -1, naive_lse = 0;
  for (naive::Products products : naive_products()) {
    const auto naive_backend = naive::make_naive_backend(products);
    if (!naive_backend->supports(p, d, ExecContext{}).ok)
      continue;
    poison(lo.out.view);
    poison(lo.lse.view());
    naive_backend->forward(p, d, ExecContext{});
    const double e = max_abs_diff(lo.out_values(), truth.out);
    REQUIRE(std::isfinite(e));
    naive_out = std::max(naive_out, e);
    if (lo.spec.lse)
      naive_lse = std::max(naive_lse, max_abs_diff(lo.lse_values(), truth.lse));
  }
  if (naive_out >= 0) {
    t.out = 2 * naive_out + forward_floor(lo.spec.dtype, max_ref);
    if (lo.spec.lse)
      t.lse = 2 * naive_lse + 2e-6 * lse_scale;
    INFO("naive error ", naive_out);
  }
  return t;
}

// The portable forward against the fp64 reference on every host context. `extra_tol` widens
// the tolerance for deliberately hard inputs (reason at the call site).
inline void check_portable(const Spec& spec, double extra_tol = 0.0) {
  Attn lo(spec);
  const Truth truth = fp64_truth(lo);
  const ForwardTolerance tol = forward_tolerance(lo, truth);
  const double tol_out = tol.out + extra_tol, tol_lse = tol.lse;

  HostSpaces spaces;
  for (const auto& [name, ctx] : spaces.contexts()) {
    INFO("execution context: ", name, ", dtype ", to_string(spec.dtype));
    const ForwardErrors e = run_portable_forward(lo, ctx, truth);
    INFO("out error ", e.out, " (tolerance ", tol_out, "), lse error ", e.lse, " (tolerance ",
         tol_lse, ")");
    CHECK(e.out <= tol_out);
    if (spec.lse)
      CHECK(e.lse <= tol_lse);
  }
}

struct Gradients {
  std::vector<double> dq, dk, dv, dbias, dsinks;
};

inline Gradients read_gradients(const Attn& a, bool dbias) {
  Gradients g{read_logical(a.dq.view), read_logical(a.dk.view), read_logical(a.dv.view), {}, {}};
  if (dbias)
    g.dbias = read_logical(a.dbias.view());
  if (a.spec.sinks)
    g.dsinks = a.dsinks.to_doubles();
  return g;
}

// Reference gradients in fp64 from lo's (rounded) inputs, bias included (the sinks are f32 and
// drawn from the same seed in both).
inline Gradients fp64_gradients(const Attn& lo, bool dbias) {
  Spec s64 = lo.spec;
  s64.dtype = DType::f64;
  s64.bias_dtype = DType::f64;
  Attn hi(s64);
  copy_logical(lo.q.view, hi.q.view);
  copy_logical(lo.k.view, hi.k.view);
  copy_logical(lo.v.view, hi.v.view);
  copy_logical(lo.dout.view, hi.dout.view);
  if (lo.spec.bias)
    copy_logical(lo.bias.view(), hi.bias.view());
  hi.backward(dbias);
  return read_gradients(hi, dbias);
}

// The portable backward against the fp64 reference on every host context: forward first (so
// out and lse hold what a training loop would pass), then the backward with poisoned
// gradients. Returns the gradients of the last run (for repeatability checks).
inline Gradients check_portable_backward(const Spec& spec, double extra_tol = 0.0) {
  Attn lo(spec);
  const bool dbias = spec.bias;
  const Gradients truth = fp64_gradients(lo, dbias);
  const BackwardProblem bp = lo.backward_problem(dbias);
  const Dims d = validate(bp);
  Gradients got;
  HostSpaces spaces;
  for (const auto& [name, ctx] : spaces.contexts()) {
    INFO("execution context: ", name, ", dtype ", to_string(spec.dtype));
    const ForwardProblem fp = lo.forward_problem();
    portable_backend().forward(fp, validate(fp), ctx);
    poison(lo.dq.view);
    poison(lo.dk.view);
    poison(lo.dv.view);
    if (dbias)
      poison(lo.dbias.view());
    poison(lo.dsinks.view());
    const Support s = portable_backend().supports(bp, d, ctx);
    INFO("portable support: ", s.reason);
    REQUIRE(s.ok);
    portable_backend().backward(bp, d, ctx);
    got = read_gradients(lo, dbias);
    const auto check = [&](const char* what, const std::vector<double>& g,
                           const std::vector<double>& t, DType stored = DType::f64) {
      const double tol =
          std::max(gradient_tol(spec.dtype, max_abs(t)), gradient_tol(stored, max_abs(t))) +
          extra_tol;
      const double err = max_abs_diff(g, t);
      INFO(what, ": error ", err, " tolerance ", tol, " max|ref| ", max_abs(t));
      CHECK(all_finite(g));
      CHECK(err <= tol);
    };
    check("dq", got.dq, truth.dq);
    check("dk", got.dk, truth.dk);
    check("dv", got.dv, truth.dv);
    // dbias is rounded to the bias's own dtype, which may be coarser than q's.
    if (dbias)
      check("dbias", got.dbias, truth.dbias, spec.bias_dtype);
    if (spec.sinks)
      check("dsinks", got.dsinks, truth.dsinks, DType::f32);
  }
  return got;
}

} // namespace kattn::test
