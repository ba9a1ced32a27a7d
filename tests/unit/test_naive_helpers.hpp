// Test helper for the naive backend: run it on every host execution space this Kokkos build has
// (plus the raw-memory path) and compare with the reference computed in fp64 from the same
// (possibly low-precision) inputs.
#pragma once

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "KokkosAttn_ExecContext.hpp"
#include "common/reference_problem.hpp"
#include "kokkosattn/builtin_backends.hpp"
#include "kokkosattn/validate.hpp"
#include "naive/naive_backend.hpp"

namespace kattn::test {

// Owns one instance of each enabled host execution space; contexts() points at them.
struct HostSpaces {
#ifdef KOKKOS_ENABLE_OPENMP
  Kokkos::OpenMP openmp;
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  Kokkos::Serial serial;
#endif
  std::vector<std::pair<std::string, ExecContext>> contexts() const {
    // The raw-memory call (no Kokkos instance) runs on Kokkos::DefaultHostExecutionSpace.
    std::vector<std::pair<std::string, ExecContext>> v{{"raw host memory", ExecContext{}}};
#ifdef KOKKOS_ENABLE_OPENMP
    v.emplace_back("OpenMP", KokkosAttn::make_exec_context(openmp));
#endif
#ifdef KOKKOS_ENABLE_SERIAL
    v.emplace_back("Serial", KokkosAttn::make_exec_context(serial));
#endif
    return v;
  }
};

struct Tolerance {
  double out = 0;
  double lse = 0;
};

// Tolerances for unit-variance inputs (|logits| of a few units, H <= 128, rows <= ~1000),
// naive vs the fp64 reference of the same inputs:
// - f64: naive accumulates in double; only summation order differs: ~1e-15, take 1e-12.
// - f32: the q.k dot of H terms in fp32 errs by ~sqrt(H) * 2^-24 * |terms| <= ~1e-6, exp keeps
//   that relative error and P.V adds ~sqrt(S) * 2^-24 * |v|: a few 1e-7 on outputs of
//   magnitude ~1; atol 1e-5 leaves >10x headroom and still catches any formula error (those
//   are >= 1e-3).
// - f16 / bf16 outputs: rounding the output dominates: half an ulp (2^-11 / 2^-8 relative);
//   allow one ulp of the largest output (2^-10 / 2^-7 times max|ref|) plus the fp32 floor.
// - LSE is fp32 in every case: one f32 ulp is 2^-23 relative, plus fp32 accumulation (~1e-6
//   relative): 1e-5 relative to max(1, max|lse|).
inline Tolerance tolerance_for(DType t, double max_ref) {
  switch (t) {
  case DType::f64:
    return {1e-12, 1e-5};
  case DType::f16:
    return {std::ldexp(max_ref, -10) + 1e-5, 1e-5};
  case DType::bf16:
    return {std::ldexp(max_ref, -7) + 1e-5, 1e-5};
  default:
    return {1e-5, 1e-5};
  }
}

inline double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    if (std::isfinite(x))
      m = std::max(m, std::abs(x));
  return m;
}

inline void copy_logical(const Tensor& from, const Tensor& to) {
  write_logical(to, read_logical(from));
}

// Fp64 truth from spec's inputs, rounded to spec.dtype first (so low-precision runs are judged
// on their own inputs).
struct Truth {
  std::vector<double> out, lse;
};

inline Truth fp64_truth(const Attn& lo) {
  Spec s64 = lo.spec;
  s64.dtype = DType::f64;
  Attn hi(s64);
  copy_logical(lo.q.view, hi.q.view);
  copy_logical(lo.k.view, hi.k.view);
  copy_logical(lo.v.view, hi.v.view);
  hi.forward();
  Truth t{hi.out_values(), {}};
  if (lo.spec.lse)
    t.lse = hi.lse_values();
  return t;
}

// Runs the naive backend on every host context (outputs poisoned before each run) and checks
// out and LSE against the fp64 truth; `extra_tol` widens the output tolerance for inputs that
// are deliberately hard (scaled, outliers), with the reason given at the call site.
// Both implementations of the products where the build has Kokkos Kernels: the GEMMs (what
// the registry's naive runs) and the loops (what a build without it runs).
inline std::vector<naive::Products> naive_products() {
  if (naive::have_kokkos_kernels)
    return {naive::Products::gemm, naive::Products::loops};
  return {naive::Products::loops};
}

inline void check_naive(const Spec& spec, double extra_tol = 0.0) {
  Attn lo(spec);
  const Truth truth = fp64_truth(lo);
  REQUIRE(all_finite(truth.out));
  const Tolerance tol = tolerance_for(spec.dtype, max_abs(truth.out));
  const ForwardProblem p = lo.forward_problem();
  const Dims d = validate(p);
  HostSpaces spaces;
  for (naive::Products products : naive_products())
    for (const auto& [name, ctx] : spaces.contexts()) {
      const auto backend = naive::make_naive_backend(products);
      INFO("execution context: ", name, ", dtype ", to_string(spec.dtype), ", ",
           backend->description());
      poison(lo.out.view);
      poison(lo.lse.view());
      const Support s = backend->supports(p, d, ctx);
      INFO("naive support: ", s.reason);
      REQUIRE(s.ok);
      backend->forward(p, d, ctx);
      const std::vector<double> out = lo.out_values();
      CHECK(all_finite(out));
      CHECK(max_abs_diff(out, truth.out) <= tol.out + extra_tol);
      // LSE is stored in fp32, so its error scales with |lse| (one ulp of 6e4 is 2^-8).
      if (spec.lse)
        CHECK(max_abs_diff(lo.lse_values(), truth.lse) <=
              tol.lse * std::max(1.0, max_abs(truth.lse)));
    }
}

inline Spec spec_of(std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K,
                    std::int64_t H, std::int64_t Hv, DType t = DType::f32) {
  Spec s;
  s.B = B, s.T = T, s.S = S, s.N = N, s.K = K, s.H = H, s.Hv = Hv;
  s.dtype = t;
  return s;
}

} // namespace kattn::test
