// Test helper: one cuDNN backward case. The cuDNN forward produces out and LSE on the device
// (as in training), then the backward runs on NaN-poisoned dq/dk/dv; the f64 reference
// gradients come from the same rounded q, k, v, dout.
//
// Tolerance per gradient: 2 * max|round(ref) - ref| (the output rounding any bf16/f16 kernel
// has) + 4u * max|ref|. The second term is a bound for the flash backward's internal roundings,
// argued per element and then loosened: P and dS = P (dP - D) are rounded to the input dtype
// before their matmuls (dV = P^T dO, dQ = dS K, dK = dS^T Q), each a relative error <= u per
// term, and dS inherits P's and dP's errors (so up to ~2u per term, ~4u with D's); for the
// random inputs used here sum|terms| stays within a small multiple of max|grad|. It is looser
// than the forward bound on purpose and printed next to every measured error.
#pragma once

#include <cstring>

#include "gpu/cudnn_case.hpp"

namespace kattn::test {

struct BackwardResult {
  bool supported = false;
  std::string reason;
  double err[3] = {0, 0, 0}, tol[3] = {0, 0, 0}; // dq, dk, dv
  bool finite = false;
  std::vector<std::byte> bits[3]; // raw dq, dk, dv (for repeatability checks)
};

inline BackwardResult run_cudnn_backward_case(Spec spec, int repeats = 1) {
  spec.opt.backend = Backend::cudnn;
  spec.bias_dtype = spec.dtype;
  spec.lse = true;
  Attn low(spec);
  Spec s64 = spec;
  s64.dtype = DType::f64;
  s64.bias_dtype = DType::f64;
  Attn ref(s64);
  write_logical(ref.q.view, read_logical(low.q.view));
  write_logical(ref.k.view, read_logical(low.k.view));
  write_logical(ref.v.view, read_logical(low.v.view));
  write_logical(ref.dout.view, read_logical(low.dout.view));
  if (spec.bias)
    write_logical(ref.bias.view(), read_logical(low.bias.view()));
  ref.backward(false);

  poison(low.out.view);
  poison(low.lse.view());
  poison(low.dq.view);
  poison(low.dk.view);
  poison(low.dv.view);
  DeviceCopy q(low.q.view), k(low.k.view), v(low.v.view), out(low.out.view), lse(low.lse.view()),
      bias(low.bias.view()), dout(low.dout.view), dq(low.dq.view), dk(low.dk.view), dv(low.dv.view);
  BackwardProblem b = low.backward_problem(false);
  b.forward.q = q.view(), b.forward.k = k.view(), b.forward.v = v.view();
  b.forward.out = out.view();
  b.forward.extras.lse = lse.view();
  b.forward.extras.bias = bias.view();
  b.dout = dout.view(), b.dq = dq.view(), b.dk = dk.view(), b.dv = dv.view();

  BackwardResult r;
  ExecContext x;
  x.device = Device::cuda;
  try {
    run_forward(default_registry(), b.forward, x);
    for (int rep = 0; rep < repeats; ++rep) {
      dq.upload(), dk.upload(), dv.upload(); // poison again
      run_backward(default_registry(), b, x);
      KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
      dq.download(), dk.download(), dv.download();
      const Tensor* hv[3] = {&low.dq.view, &low.dk.view, &low.dv.view};
      for (int i = 0; i < 3; ++i) {
        const auto raw = static_cast<const std::byte*>(hv[i]->data);
        const std::size_t n = static_cast<std::size_t>(hv[i]->numel()) * size_bytes(spec.dtype);
        if (rep == 0)
          r.bits[i].assign(raw, raw + n);
        else if (std::memcmp(r.bits[i].data(), raw, n) != 0)
          r.bits[i].clear(); // not repeatable: an empty record
      }
    }
    r.supported = true;
  } catch (const Unsupported& e) {
    r.reason = e.what();
  }
  KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());

  const Buffer* got[3] = {&low.dq, &low.dk, &low.dv};
  const Buffer* want[3] = {&ref.dq, &ref.dk, &ref.dv};
  const double u = unit_roundoff(spec.dtype);
  r.finite = true;
  for (int i = 0; i < 3; ++i) {
    const std::vector<double> g = read_logical(got[i]->view), w = read_logical(want[i]->view);
    r.finite = r.finite && all_finite(g);
    double baseline = 0;
    for (double x_ref : w)
      baseline = std::max(baseline, std::abs(round_to(spec.dtype, x_ref) - x_ref));
    r.err[i] = max_abs_diff(g, w);
    r.tol[i] = 2 * baseline + 4 * u * max_abs(w) + 1e-6;
  }
  MESSAGE("backward " << spec_string(spec) << " deterministic=" << spec.opt.deterministic
                      << (r.supported ? "" : "  UNSUPPORTED: " + r.reason) << "  dq err "
                      << r.err[0] << " (tol " << r.tol[0] << ")  dk err " << r.err[1] << " (tol "
                      << r.tol[1] << ")  dv err " << r.err[2] << " (tol " << r.tol[2] << ")");
  return r;
}

inline void check_backward_matches(const Spec& spec) {
  const BackwardResult r = run_cudnn_backward_case(spec);
  INFO(spec_string(spec));
  INFO("reason: " << r.reason);
  REQUIRE(r.supported);
  CHECK(r.finite);
  for (int i = 0; i < 3; ++i)
    CHECK(r.err[i] <= r.tol[i]);
}

} // namespace kattn::test
