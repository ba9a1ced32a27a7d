#include "conformance/judge.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/host_tensor.hpp"

namespace kattn::conformance {

double accumulation_eps(DType t) {
  return t == DType::f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
}

namespace {
// Unit roundoff of the storage dtype (a backend that rounds P to it before P.V, as fused GPU
// kernels do, adds up to this relative error to every weight).
double storage_eps(DType t) {
  switch (t) {
  case DType::f16:
    return std::ldexp(1.0, -11);
  case DType::bf16:
    return std::ldexp(1.0, -8);
  default:
    return 0.0; // f32 / f64 backends keep P in the accumulation type
  }
}
} // namespace

// Error model, with a factor 4 of headroom on each term:
// - a logit carries delta = u * (sqrt(H) * logit_dot + 2 * |added terms| + 1): the q.k dot of
//   H fp32 products errs by ~sqrt(H) u |q||k| (random rounding), adding bias/ALiBi and
//   subtracting the row max err by u times their size;
// - softmax moves the output by at most 2 * delta * max|v| per unit of logit error, and P.V
//   adds ~sqrt(S) * u * max|v|; dropout multiplies every weight by 1/(1-p);
// - P rounded to a 16-bit dtype adds at most storage_eps * max|v| (CPU backends keep P in fp32;
//   fused GPU kernels round it, as the brief's "naive same precision" baseline does).
// Gradients chain the same errors through dS = P (dP - D) and the two products back, so their
// floor uses the same relative error times the gradient's own size or the size of one of its
// terms, whichever is larger, with sqrt(T) added for the sum over queries in dk/dv. In 16-bit
// dtypes the stored `out` feeds D = dO.O, hence storage_eps there too. LSE is fp32 everywhere: its
// own rounding plus delta. dbias adds, in 16-bit dtypes, the rounding of each dS element it sums
// (fused GPU kernels keep dS in the storage dtype for the dq/dk products, and reduce a broadcast
// dbias from it): storage_eps times the number of summed elements times one term's size (seen
// on the H200: cudnn's head-broadcast bf16 dbias one ulp off, past the old floor of half an
// ulp). For f32 on unit-variance inputs (H = 64, S = 64) this gives ~5e-5 *
// max|v|: far below the 1e-3 a formula error causes (the perturbation tests in tests/unit check
// that). dsinks takes the same relative floor over the sum of its terms' sizes (dsinks_terms): a
// bound with every rounding of the sum aligned, so loose in 16-bit dtypes.
double atol_floor(const std::string& tensor, DType dtype, const Magnitudes& m, double scale) {
  const double u = accumulation_eps(dtype);
  const double sH = std::sqrt(static_cast<double>(std::max<std::int64_t>(m.H, 1)));
  const double sS = std::sqrt(static_cast<double>(std::max<std::int64_t>(m.S, 1)));
  const double sT = std::sqrt(static_cast<double>(std::max<std::int64_t>(m.T, 1)));
  const double delta = u * (sH * m.logit_dot + 2 * m.logit_extra + 1);
  if (tensor == "lse") {
    const double u32 = std::ldexp(1.0, -24);
    return 4 * (u32 * (std::max(scale, 1.0) + sS) + delta);
  }
  // The 16-bit P term is a worst-case bound already (|sum_j dP_j v_j| <= u max|v|): no headroom.
  if (tensor == "out")
    return (4 * (2 * delta + sS * u) + storage_eps(dtype)) * m.v_max * m.keep_scale;
  // dq, dk, dv, dbias (the terms already include keep_scale)
  const double rel = 4 * (2 * delta + (sS + sT + sH) * u) + storage_eps(dtype);
  const double term = tensor == "dq"       ? m.dq_term
                      : tensor == "dk"     ? m.dk_term
                      : tensor == "dv"     ? m.dv_term
                      : tensor == "dsinks" ? m.dsinks_terms
                                           : m.dbias_term;
  const double ds_rounding =
      tensor == "dbias" ? storage_eps(dtype) * static_cast<double>(m.dbias_reduce) * term : 0.0;
  // dsinks is stored in f32 whatever the dtype: one f32 ulp of it on top (an f64 backend's sum
  // may round to the neighbour of the truth's).
  const double f32_storage = tensor == "dsinks" ? std::ldexp(1.0, -23) * scale : 0.0;
  return rel * std::max(scale, term) + ds_rounding + f32_storage;
}

Check judge(const std::string& tensor, const std::vector<double>& got,
            const std::vector<double>& ref, const std::vector<double>& baseline, double floor) {
  Check c;
  c.tensor = tensor;
  c.err = test::max_abs_diff(got, ref);
  c.baseline_err = test::max_abs_diff(baseline, ref);
  c.floor = floor;
  c.tol = 2 * c.baseline_err + floor;
  c.ok = c.err <= c.tol; // NaN never passes: max_abs_diff maps it to +inf
  if (!std::isfinite(c.tol))
    c.ok = false; // a broken baseline must not wave everything through
  return c;
}

} // namespace kattn::conformance
