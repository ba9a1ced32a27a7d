// Test helper: one forward case through the `cuda` backend (our flash kernels) end to end.
// Random low-precision inputs on the host, the f64 reference on the SAME rounded values,
// NaN-poisoned device outputs, the backend forced through the dispatcher with the kernel
// family forced by KOKKOSATTN_CUDA_KERNEL, results copied back and compared.
//
// Tolerance (BRIEF.md's rule, max|out - ref| <= 2 * max|same_precision - ref| + atol):
// * the same-precision baseline is the exact result rounded to the output dtype (the best a
//   bf16/f16 kernel can return): max|round(ref) - ref|;
// * atol covers what a flash kernel adds: P = exp(s - m) is rounded to the input dtype before
//   P.V (|error| <= u * sum_j p_j |v_j| <= u * max|v|; we allow 2u * max|v|), plus fp32
//   accumulation and the fast exp2/tanh (relative ~1e-6, far below u * max|v|).
// LSE: fp32 from exact products with fp32 accumulation over H terms and a fp32 log; 1e-3
// absolute plus 1e-5 relative to max|lse| (outlier inputs give |lse| in the hundreds) still
// catches log2-vs-ln (factor 1.44), a missing scale or a wrong mask.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "common/reference_problem.hpp"
#include "cuda/cuda_backend.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_forward.hpp"
#include "gpu/gpu_tolerance.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"

namespace kattn::test {

// Sets an environment variable for a scope (the family switch KOKKOSATTN_CUDA_KERNEL).
class ScopedEnv {
public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      had_ = true;
      old_ = old;
    }
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_.c_str(), old_.c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  std::string name_, old_;
  bool had_ = false;
};

struct CudaResult {
  bool supported = false;
  std::string reason; // the backend's reason when not supported
  std::string kernel; // the kernel choose_kernel named
  double err_out = 0, tol_out = 0, err_lse = 0, tol_lse = 0;
  bool out_finite = false;
  bool out_all_nan = false; // untouched since poisoning
  std::vector<double> out, ref_out, lse, ref_lse;
};

// A forward-test problem with H == Hv and a seed from its sizes; `salt` keeps the inputs of
// two test files apart.
inline Spec cuda_spec(DType t, std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N,
                      std::int64_t K, std::int64_t H, std::uint64_t salt = 0) {
  Spec s;
  s.dtype = t;
  s.B = B, s.T = T, s.S = S, s.N = N, s.K = K, s.H = H, s.Hv = H;
  s.seed = static_cast<std::uint64_t>(T * 131 + S * 7 + H + N) + salt;
  return s;
}

inline Spec causal(Spec s, Alignment a) {
  s.opt.causal = true;
  s.opt.alignment = a;
  return s;
}

// The tiny ragged problems of the sanitizer smoke tests, small enough for compute-sanitizer:
// a padded causal band with softcap (padded rows, a tail key tile, masks, epilogue row guards)
// and a packed batch whose last tile ends inside the tensor. `salt` as in cuda_spec.
inline std::vector<Spec> ragged_smoke_specs(DType t, std::int64_t H, std::uint64_t salt = 0) {
  Spec s = causal(cuda_spec(t, 2, 70, 90, 2, 1, H, salt), Alignment::bottom_right);
  s.q_lens = {70, 33};
  s.k_lens = {90, 17};
  s.opt.softcap = 10.0;
  Spec p = cuda_spec(t, 0, 0, 0, 2, 2, H, salt);
  p.packed = true;
  p.q_lens = {5, 70};
  p.k_lens = {80, 3};
  return {s, p};
}

inline std::string cuda_spec_string(const Spec& s) {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s B=%lld T=%lld S=%lld N=%lld K=%lld H=%lld causal=%d window=(%lld,%lld) %s "
                "softcap=%g lse=%d heads_major=%d seq_major=%d packed=%d padded=%d outliers=%d",
                std::string(to_string(s.dtype)).c_str(), (long long)s.B, (long long)s.T,
                (long long)s.S, (long long)s.N, (long long)s.K, (long long)s.H, s.opt.causal,
                (long long)s.opt.window_left, (long long)s.opt.window_right,
                s.opt.alignment == Alignment::bottom_right ? "bottom_right" : "top_left",
                s.opt.softcap, s.lse, s.heads_major, s.seq_major, s.packed,
                !s.packed && (!s.q_lens.empty() || !s.k_lens.empty()), s.outliers);
  return buf;
}

// A change to the device problem after the reference ran: what a user's device buffers may hold
// that host validation never saw (e.g. lengths past T).
using BeforeRun = std::function<void(ForwardProblem&)>;

// Runs `spec` (bf16/f16) through the forced cuda backend with kernel family `family` ("sm80",
// "sm90", or nullptr for the library's own choice). `stream` is the ExecContext's.
inline CudaResult run_cuda_case(Spec spec, const char* family = "sm80", void* stream = nullptr,
                                const BeforeRun& before_run = {}) {
  spec.opt.backend = Backend::cuda;
  Attn low(spec); // inputs rounded to the low precision
  Spec s64 = low.spec;
  s64.dtype = DType::f64;
  Attn ref(s64);
  write_logical(ref.q.view, read_logical(low.q.view));
  write_logical(ref.k.view, read_logical(low.k.view));
  write_logical(ref.v.view, read_logical(low.v.view));
  ref.forward();

  poison(low.out.view);
  poison(low.lse.view());
  DeviceForward dev(low);
  ForwardProblem& p = dev.problem;

  if (before_run)
    before_run(p);

  CudaResult r;
  ScopedEnv env("KOKKOSATTN_CUDA_KERNEL", family);
  ExecContext x;
  x.device = Device::cuda;
  x.stream = stream;
  try {
    std::string why;
    r.kernel = kattn::cuda::kernel_for(p, &why);
    run_forward(default_registry(), p, x);
    r.supported = true;
  } catch (const Unsupported& e) {
    r.reason = e.what();
  }
  KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
  dev.download();

  r.out = read_logical(low.out.view);
  r.ref_out = ref.out_values();
  r.out_finite = all_finite(r.out);
  r.out_all_nan = std::all_of(r.out.begin(), r.out.end(), [](double g) { return std::isnan(g); });
  const double u = unit_roundoff(spec.dtype);
  double baseline = 0;
  for (double x_ref : r.ref_out)
    baseline = std::max(baseline, std::abs(round_to(spec.dtype, x_ref) - x_ref));
  r.err_out = max_abs_diff(r.out, r.ref_out);
  r.tol_out = 2 * baseline + 2 * u * max_abs(read_logical(ref.v.view)) + 1e-6;
  if (spec.lse) {
    r.lse = low.lse_values();
    r.ref_lse = ref.lse_values();
    r.err_lse = max_abs_diff(r.lse, r.ref_lse);
    r.tol_lse = 1e-3 + 1e-5 * max_abs(r.ref_lse);
  }
  const std::string fam = family ? family : "auto";
  MESSAGE(cuda_spec_string(spec) << " [" << fam << ": " << r.kernel << "]"
                                 << (r.supported ? "" : "  UNSUPPORTED: " + r.reason)
                                 << "  out err " << r.err_out << " (tol " << r.tol_out << ")"
                                 << "  lse err " << r.err_lse << " (tol " << r.tol_lse << ")");
  return r;
}

// The usual verdict: supported by the family, every output written, within tolerance.
inline CudaResult cuda_matches(const Spec& spec, const char* family = "sm80",
                               void* stream = nullptr, const BeforeRun& before_run = {}) {
  CudaResult r = run_cuda_case(spec, family, stream, before_run);
  INFO(cuda_spec_string(spec));
  INFO("reason: " << r.reason);
  REQUIRE(r.supported);
  if (family)
    CHECK(r.kernel.rfind(family, 0) == 0);
  CHECK(r.out_finite);
  CHECK(r.err_out <= r.tol_out);
  if (spec.lse)
    CHECK(r.err_lse <= r.tol_lse);
  return r;
}

} // namespace kattn::test
