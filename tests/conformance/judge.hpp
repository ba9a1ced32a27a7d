// The pass/fail rule: BRIEF.md's (FlashAttention's) tolerance
//
//     max|out - ref| <= 2 * max|baseline - ref| + atol_floor
//
// applied to every output (out, lse, dq, dk, dv, dbias).
//
// ref      the reference backend in f64 on the problem's inputs (already rounded to the dtype).
// baseline the reference backend on the problem itself: the same rounded inputs, double
//          arithmetic, each output rounded once to its dtype. That is the best any backend can
//          do in that precision (a "same-precision" result with no accumulation error), so
//          2 * its error is the rounding budget. We use it rather than a second, fp32 naive
//          implementation because it exists for every option (varlen, dropout, backward) and
//          cannot itself be wrong in a way that loosens the rule: its error is pure rounding.
// floor    what fp32 accumulation (f64 for f64 problems) may add on top of rounding; see
//          Magnitudes and floor() in judge.cpp. It scales with the logit magnitude, because an
//          fp32 logit of size L carries an absolute error ~L * 2^-24 into exp().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kokkosattn/dtype.hpp"

namespace kattn::conformance {

// Sizes of the quantities that set the accumulation error, measured on the f64 problem.
struct Magnitudes {
  double logit_dot = 0;   // scale * max|q_i| * max|k_j| (Euclidean norms): bounds |scale q.k|
  double logit_extra = 0; // max|bias| + max ALiBi term (+ softcap c): the added terms
  double v_max = 0;       // max|v|
  double keep_scale = 1;  // 1/(1-p) with dropout
  // Backward: the size of one term of each gradient's sum, whatever the sum cancels to (a
  // gradient that is exactly 0, e.g. dq with a single visible key, still carries the rounding
  // of its terms): scale*|dO||v||k| for dq, scale*|dO||v||q| for dk, |dO||v| for dbias, |dO|
  // for dv, elementwise maxima, times keep_scale.
  double dq_term = 0, dk_term = 0, dbias_term = 0, dv_term = 0;
  // dS elements each broadcast dbias element sums (B with a batch-broadcast bias, times N with a
  // head-broadcast one; 1 without broadcast).
  std::int64_t dbias_reduce = 1;
  // dsinks (rule sinks) sums p_sink * D over a head's rows, p_sink <= 1 and |D| <= sum_h |dO||O|:
  // keep_scale * max|v| * (the largest sum of |dO| over one head's elements) bounds its terms.
  double dsinks_terms = 0;
  std::int64_t H = 0, S = 0, T = 0;
};

// One output judged.
struct Check {
  std::string tensor; // "out", "lse", "dq", ...
  double err = 0;     // max|backend - ref| (inf when NaN appears or infinities disagree)
  double baseline_err = 0;
  double floor = 0;
  double tol = 0;
  bool ok = false;
};

// Unit roundoff of the accumulation a backend may use for `t`: 2^-53 for f64, else 2^-24.
double accumulation_eps(DType t);

// atol_floor for `tensor` of a problem in `dtype`; `scale` is max|ref| of that tensor (LSE and
// gradients).
double atol_floor(const std::string& tensor, DType dtype, const Magnitudes& m, double scale);

Check judge(const std::string& tensor, const std::vector<double>& got,
            const std::vector<double>& ref, const std::vector<double>& baseline, double floor);

} // namespace kattn::conformance
