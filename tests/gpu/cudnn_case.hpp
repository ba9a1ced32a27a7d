// Test helper: one cuDNN forward case end to end. Random low-precision inputs on the host, the
// reference on the SAME (already rounded) values in f64, NaN-poisoned device outputs, the
// cudnn backend forced through the dispatcher, results copied back and compared.
//
// Tolerance (BRIEF.md's rule, max|out - ref| <= 2 * max|same_precision - ref| + atol):
// * the same-precision baseline is the exact result rounded to the output dtype, i.e. the best
//   any bf16/f16 kernel can return: max|round(ref) - ref| (unit roundoff u = 2^-8 bf16,
//   2^-11 f16, times |out|);
// * atol covers what a flash kernel adds on top: P = exp(s - m) is rounded to the input dtype
//   before the P·V matmul (|error| <= u * sum_j p_j |v_j| <= u * max|v| per rescaling step;
//   we allow 2u * max|v|), plus fp32 accumulation (<= S * 2^-24 * max|v|, far below).
// LSE is fp32 from exact bf16/f16 products with fp32 accumulation: its error is ~1e-6 of
// |lse|; 1e-3 absolute still catches log2-vs-ln (factor 1.44), a missing scale or a wrong mask.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "common/reference_problem.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/gpu_tolerance.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"

namespace kattn::test {

struct CaseResult {
  bool supported = false;
  std::string reason; // cuDNN's (or our) reason when not supported
  double err_out = 0, tol_out = 0, err_lse = 0, tol_lse = 0;
  bool out_finite = false;
  bool out_all_nan = false;    // untouched since poisoning
  bool exact_zeros = false;    // every output the reference makes exactly 0 is exactly 0
  std::vector<double> ref_out; // the f64 reference, for discrimination checks
};

inline std::string spec_string(const Spec& s) {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s B=%lld T=%lld S=%lld N=%lld K=%lld H=%lld Hv=%lld causal=%d window=(%lld,%lld) "
                "%s bias=%d%s lse=%d heads_major=%d alibi=%d padded=%d packed=%d",
                std::string(to_string(s.dtype)).c_str(), (long long)s.B, (long long)s.T,
                (long long)s.S, (long long)s.N, (long long)s.K, (long long)s.H, (long long)s.Hv,
                s.opt.causal, (long long)s.opt.window_left, (long long)s.opt.window_right,
                s.opt.alignment == Alignment::bottom_right ? "bottom_right" : "top_left", s.bias,
                s.bias ? (s.bias_bcast_b ? "[1,N]" : (s.bias_bcast_n ? "[B,1]" : "[B,N]")) : "",
                s.lse, s.heads_major, s.alibi, !s.packed && !s.q_lens.empty(), s.packed);
  return buf;
}

// Copies every data tensor of a host problem's extras (slopes, lengths, offsets) to the device;
// lse and bias are handled by the callers (they compare or reuse them).
struct DeviceExtras {
  DeviceCopy slopes, seqlens_q, seqlens_k, cu_q, cu_k;
  std::int64_t max_q = 0, max_k = 0; // packed: device offsets need the longest lengths
  explicit DeviceExtras(const Attn& a)
      : slopes(a.slopes.view()), seqlens_q(a.seqlens_q.view()), seqlens_k(a.seqlens_k.view()),
        cu_q(a.cu_q.view()), cu_k(a.cu_k.view()) {
    if (a.spec.packed)
      max_q = a.spec.T, max_k = a.spec.S;
  }
  void apply(Extras& e) const {
    e.alibi_slopes = slopes.view();
    e.seqlens_q = seqlens_q.view();
    e.seqlens_k = seqlens_k.view();
    e.cu_seqlens_q = cu_q.view();
    e.cu_seqlens_k = cu_k.view();
    e.max_seqlen_q = max_q;
    e.max_seqlen_k = max_k;
  }
};

// Overwrites the ALiBi slopes of a host problem (e.g. with cuDNN's fixed ones).
inline void set_slopes(Attn& a, const std::vector<double>& slopes) {
  for (std::size_t i = 0; i < slopes.size(); ++i)
    a.slopes.set(static_cast<std::int64_t>(i), slopes[i]);
}

// Runs `spec` (dtype bf16/f16) through the forced cudnn backend. `stream` is the ExecContext's;
// `slopes`, when given, replaces the random ALiBi slopes.
inline CaseResult run_cudnn_case(Spec spec, void* stream = nullptr,
                                 const std::vector<double>& slopes = {}) {
  spec.opt.backend = Backend::cudnn;
  spec.bias_dtype = spec.dtype;
  Attn low(spec); // inputs rounded to the low precision

  Spec s64 = spec;
  s64.dtype = DType::f64;
  s64.bias_dtype = DType::f64;
  Attn ref(s64);
  write_logical(ref.q.view, read_logical(low.q.view));
  write_logical(ref.k.view, read_logical(low.k.view));
  write_logical(ref.v.view, read_logical(low.v.view));
  if (spec.bias)
    write_logical(ref.bias.view(), read_logical(low.bias.view()));
  if (!slopes.empty()) {
    set_slopes(low, slopes);
    set_slopes(ref, slopes);
  }
  ref.forward();

  poison(low.out.view);
  poison(low.lse.view());
  DeviceCopy q(low.q.view), k(low.k.view), v(low.v.view), out(low.out.view), lse(low.lse.view()),
      bias(low.bias.view());
  ForwardProblem p = low.forward_problem();
  p.q = q.view(), p.k = k.view(), p.v = v.view(), p.out = out.view();
  p.extras.lse = lse.view();
  p.extras.bias = bias.view();
  const DeviceExtras extras(low);
  extras.apply(p.extras);

  CaseResult r;
  ExecContext x;
  x.device = Device::cuda;
  x.stream = stream;
  try {
    run_forward(default_registry(), p, x);
    r.supported = true;
  } catch (const Unsupported& e) {
    r.reason = e.what();
  }
  KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
  out.download();
  lse.download();

  const std::vector<double> got = read_logical(low.out.view);
  r.ref_out = ref.out_values();
  r.out_finite = all_finite(got);
  r.out_all_nan = std::all_of(got.begin(), got.end(), [](double g) { return std::isnan(g); });
  r.exact_zeros = true; // padded rows and rows without keys (random inputs give no other zeros)
  for (std::size_t i = 0; i < got.size(); ++i)
    r.exact_zeros = r.exact_zeros && (r.ref_out[i] != 0.0 || got[i] == 0.0);
  const double u = unit_roundoff(spec.dtype);
  double baseline = 0;
  for (double x_ref : r.ref_out)
    baseline = std::max(baseline, std::abs(round_to(spec.dtype, x_ref) - x_ref));
  r.err_out = max_abs_diff(got, r.ref_out);
  r.tol_out = 2 * baseline + 2 * u * max_abs(read_logical(ref.v.view)) + 1e-6;
  if (spec.lse) {
    r.err_lse = max_abs_diff(low.lse_values(), ref.lse_values());
    r.tol_lse = 1e-3;
  }
  MESSAGE(spec_string(spec) << (r.supported ? "" : "  UNSUPPORTED: " + r.reason) << "  out err "
                            << r.err_out << " (tol " << r.tol_out << ")"
                            << "  lse err " << r.err_lse << " (tol " << r.tol_lse << ")");
  return r;
}

// The usual verdict: supported, every output written, within tolerance.
inline void check_matches(const Spec& spec, void* stream = nullptr,
                          const std::vector<double>& slopes = {}) {
  const CaseResult r = run_cudnn_case(spec, stream, slopes);
  INFO(spec_string(spec));
  INFO("reason: " << r.reason);
  REQUIRE(r.supported);
  CHECK(r.out_finite);
  CHECK(r.exact_zeros);
  CHECK(r.err_out <= r.tol_out);
  if (spec.lse)
    CHECK(r.err_lse <= r.tol_lse);
}

} // namespace kattn::test
