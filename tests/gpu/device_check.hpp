// Test helper: one forward case through a backend on the CUDA device against the fp64
// reference on the same rounded inputs.
// Tolerance, BRIEF.md's rule (2x a same-precision baseline's error plus a floor of a few fp32
// ulps, one output ulp for f16/bf16; f64: 1e-12): the larger of the host tests' bound (2x
// naive's error, unit/test_portable_helpers.hpp forward_tolerance; an absolute one where naive
// does not serve: packed varlen, dropout) and 2x the host portable backend's error on the same
// inputs. The second baseline sums each score's H products in sequence as the GPU kernels do
// (naive's BLAS keeps several partial sums, so at H = 128 with an explicit scale of 0.3 naive's
// error was 2.7e-6 and portable's device kernel's 5.8e-6 in fp32, 1.01x the naive bound). A
// wrong mask, scale or rescale costs orders of magnitude more than either.
#pragma once

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "common/dispatch_fixture.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_forward.hpp"
#include "unit/test_portable_helpers.hpp"

namespace kattn::test {

// Runs lo's forward through `backend` on the CUDA device (outputs NaN-poisoned first) and
// downloads out and LSE into lo; returns the backend's verdict, which must be ok.
inline Support run_on_device(const BackendImpl& backend, Attn& lo) {
  poison(lo.out.view);
  poison(lo.lse.view());
  DeviceForward dev(lo);
  const Dims d = validate(dev.problem);
  ExecContext x;
  x.device = Device::cuda;
  const Support s = backend.supports(dev.problem, d, x);
  INFO("support: ", s.reason);
  REQUIRE(s.ok);
  backend.forward(dev.problem, d, x);
  KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
  dev.download();
  return s;
}

// Runs lo's forward through `backend` on the CUDA device (NaN-poisoned outputs) and checks it
// against the fp64 reference of lo's inputs; returns the kernel the backend's support check
// names. `extra_tol` widens the output tolerance (reason at the call site).
inline std::string check_attn_on_device(const BackendImpl& backend, Attn& lo,
                                        double extra_tol = 0.0) {
  const Spec& spec = lo.spec;
  const Truth truth = fp64_truth(lo);
  ForwardTolerance tol = forward_tolerance(lo, truth);
  ForwardErrors host;
  {
    EnvGuard host_kernel("KOKKOSATTN_PORTABLE_KERNEL", nullptr); // a forced device kernel
    host = run_portable_forward(lo, ExecContext{}, truth);
  }
  tol.out =
      std::max(tol.out, 2 * host.out + forward_floor(spec.dtype, max_abs(truth.out))) + extra_tol;
  if (spec.lse)
    tol.lse = std::max(tol.lse, 2 * host.lse + 2e-6 * std::max(1.0, max_abs(truth.lse)));

  const Support s = run_on_device(backend, lo);

  const std::vector<double> got = lo.out_values();
  const double err_out = max_abs_diff(got, truth.out);
  const double err_lse = spec.lse ? max_abs_diff(lo.lse_values(), truth.lse) : 0.0;
  MESSAGE(to_string(spec.dtype) << " B=" << spec.B << " T=" << spec.T << " S=" << spec.S
                                << " H=" << spec.H << " Hv=" << spec.Hv << " [" << s.kernel
                                << "] out err " << err_out << " (tol " << tol.out << ") lse err "
                                << err_lse << " (tol " << tol.lse << ")");
  CHECK(all_finite(got));
  CHECK(err_out <= tol.out);
  if (spec.lse)
    CHECK(err_lse <= tol.lse);
  return s.kernel;
}

// check_attn_on_device on spec's inputs.
inline std::string check_on_device(const BackendImpl& backend, const Spec& spec,
                                   double extra_tol = 0.0) {
  Attn lo(spec);
  return check_attn_on_device(backend, lo, extra_tol);
}

} // namespace kattn::test
