// Test helper: one backward case on a GPU backend (cudnn or cuda). That backend's forward
// produces out and LSE on the device (as in training), then the backward runs on NaN-poisoned
// dq/dk/dv; the f64 reference gradients come from the same rounded q, k, v, dout.
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
#include "gpu/structural_zeros.hpp"

namespace kattn::test {

struct BackwardResult {
  bool supported = false;
  std::string reason;
  double err[4] = {0, 0, 0, 0}, tol[4] = {0, 0, 0, 0}; // dq, dk, dv, dbias (when asked)
  bool finite = false;
  bool exact_zeros = true; // gradients that are 0 by structure (structural_zeros_exact) are 0
  std::vector<std::byte> bits[3]; // raw dq, dk, dv (for repeatability checks)
  std::string kernel;             // the kernel explain() names for the backend, if any
};

inline BackwardResult run_backward_case(Backend backend, Spec spec, int repeats = 1,
                                        bool with_dbias = false,
                                        const std::vector<double>& slopes = {}) {
  spec.opt.backend = backend;
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
  if (!slopes.empty()) {
    set_slopes(low, slopes);
    set_slopes(ref, slopes);
  }
  ref.backward(with_dbias);

  poison(low.out.view);
  poison(low.lse.view());
  poison(low.dq.view);
  poison(low.dk.view);
  poison(low.dv.view);
  if (with_dbias)
    poison(low.dbias.view());
  DeviceCopy q(low.q.view), k(low.k.view), v(low.v.view), out(low.out.view), lse(low.lse.view()),
      bias(low.bias.view()), dout(low.dout.view), dq(low.dq.view), dk(low.dk.view), dv(low.dv.view),
      dbias(with_dbias ? low.dbias.view() : Tensor{});
  BackwardProblem b = low.backward_problem(with_dbias);
  b.forward.q = q.view(), b.forward.k = k.view(), b.forward.v = v.view();
  b.forward.out = out.view();
  b.forward.extras.lse = lse.view();
  b.forward.extras.bias = bias.view();
  b.dout = dout.view(), b.dq = dq.view(), b.dk = dk.view(), b.dv = dv.view();
  b.dbias = dbias.view();
  const DeviceExtras extras(low);
  extras.apply(b.forward.extras);

  BackwardResult r;
  ExecContext x;
  x.device = Device::cuda;
  try {
    run_forward(default_registry(), b.forward, x);
    for (const BackendVerdict& verdict : explain(default_registry(), b, x))
      if (verdict.backend == backend)
        r.kernel = verdict.kernel;
    for (int rep = 0; rep < repeats; ++rep) {
      dq.upload(), dk.upload(), dv.upload(), dbias.upload(); // poison again
      run_backward(default_registry(), b, x);
      KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
      dq.download(), dk.download(), dv.download(), dbias.download();
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

  r.exact_zeros = structural_zeros_exact(low.spec, read_logical(low.dq.view),
                                         read_logical(low.dk.view), read_logical(low.dv.view));
  const Tensor got[4] = {low.dq.view, low.dk.view, low.dv.view, low.dbias.view()};
  const Tensor want[4] = {ref.dq.view, ref.dk.view, ref.dv.view, ref.dbias.view()};
  const double u = unit_roundoff(spec.dtype);
  r.finite = true;
  for (int i = 0; i < (with_dbias ? 4 : 3); ++i) {
    // dbias = dS summed over broadcast dims: the same per-element argument as dq's.
    const std::vector<double> g = read_logical(got[i]), w = read_logical(want[i]);
    r.finite = r.finite && all_finite(g);
    double baseline = 0;
    for (double x_ref : w)
      baseline = std::max(baseline, std::abs(round_to(spec.dtype, x_ref) - x_ref));
    r.err[i] = max_abs_diff(g, w);
    r.tol[i] = 2 * baseline + 4 * u * max_abs(w) + 1e-6;
  }
  MESSAGE("backward [" << to_string(backend) << "] " << spec_string(spec)
                       << " deterministic=" << spec.opt.deterministic << " [" << r.kernel << "]"
                       << (r.supported ? "" : "  UNSUPPORTED: " + r.reason) << "  dq err "
                       << r.err[0] << " (tol " << r.tol[0] << ")  dk err " << r.err[1] << " (tol "
                       << r.tol[1] << ")  dv err " << r.err[2] << " (tol " << r.tol[2] << ")"
                       << (with_dbias ? "  dbias err " + std::to_string(r.err[3]) + " (tol " +
                                            std::to_string(r.tol[3]) + ")"
                                      : std::string()));
  return r;
}

inline void check_backward_matches(const Spec& spec, bool with_dbias = false,
                                   const std::vector<double>& slopes = {},
                                   Backend backend = Backend::cudnn) {
  const BackwardResult r = run_backward_case(backend, spec, 1, with_dbias, slopes);
  INFO(spec_string(spec));
  INFO("reason: " << r.reason);
  REQUIRE(r.supported);
  CHECK(r.finite);
  CHECK(r.exact_zeros);
  for (int i = 0; i < (with_dbias ? 4 : 3); ++i)
    CHECK(r.err[i] <= r.tol[i]);
}

} // namespace kattn::test
