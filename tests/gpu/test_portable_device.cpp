// The portable backend on Kokkos::Cuda through device pointers: the GPU kernel of
// backends/portable/portable_device_forward_kernel.hpp (value head dims up to 128) and the
// team-scratch tiles beyond, against the fp64 reference on the same rounded inputs.
// Tolerance, BRIEF.md's rule (2x a same-precision baseline's error plus a floor of a few fp32
// ulps, one output ulp for f16/bf16): the larger of the host tests' bound (2x naive's error,
// unit/test_portable_helpers.hpp forward_tolerance; an absolute one where naive does not serve:
// packed varlen, dropout) and 2x the host portable backend's error on the same inputs. The
// second baseline is the same algorithm: both sum each score's H products in sequence (naive's
// BLAS keeps several partial sums, so at H = 128 with an explicit scale of 0.3 naive's error was
// 2.7e-6 and the device kernel's 5.8e-6, 1.01x the naive bound). A wrong mask, scale or
// rescale costs orders of magnitude more than either.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <utility>

#include "common/dispatch_fixture.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_forward.hpp"
#include "unit/test_portable_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

// Runs spec's forward through the portable backend on the CUDA device (NaN-poisoned outputs)
// and checks it; returns the kernel explain() names.
std::string check_on_device(const Spec& spec) {
  Attn lo(spec);
  const Truth truth = fp64_truth(lo);
  ForwardTolerance tol = forward_tolerance(lo, truth);
  ForwardErrors host;
  {
    EnvGuard host_kernel("KOKKOSATTN_PORTABLE_KERNEL", nullptr); // a forced device kernel
    host = run_portable_forward(lo, ExecContext{}, truth);
  }
  tol.out = std::max(tol.out, 2 * host.out + forward_floor(spec.dtype, max_abs(truth.out)));
  if (spec.lse)
    tol.lse = std::max(tol.lse, 2 * host.lse + 2e-6 * std::max(1.0, max_abs(truth.lse)));

  poison(lo.out.view);
  poison(lo.lse.view());
  DeviceForward dev(lo);
  const ForwardProblem& p = dev.problem;
  const Dims d = validate(p);
  ExecContext x;
  x.device = Device::cuda;
  const Support s = portable_backend().supports(p, d, x);
  INFO("portable support: ", s.reason);
  REQUIRE(s.ok);
  portable_backend().forward(p, d, x);
  KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
  dev.download();

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

constexpr DType all_dtypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16};

} // namespace

TEST_CASE("portable/device: every dtype, value head dims 64, 128 and past the register tiles") {
  for (DType t : all_dtypes) {
    INFO(to_string(t));
    // 130 rows and 200 keys: partial row blocks and key tiles; GQA 4/2.
    CHECK(check_on_device(spec_of(2, 130, 200, 4, 2, 64, 64, t)) == "portable_device_fwd_hv64");
    CHECK(check_on_device(spec_of(1, 70, 129, 2, 1, 128, 128, t)) == "portable_device_fwd_hv128");
    CHECK(check_on_device(spec_of(1, 33, 65, 2, 2, 96, 40, t)) == "portable_device_fwd_hv64");
    CHECK(check_on_device(spec_of(1, 40, 70, 2, 1, 72, 100, t)) == "portable_device_fwd_hv128");
    CHECK(check_on_device(spec_of(1, 40, 50, 2, 1, 32, 160, t)) == "portable_tiles_fwd");
  }
}

TEST_CASE("portable/device: T = 1, long rows, MQA, permuted storage") {
  check_on_device(spec_of(2, 1, 300, 4, 1, 64, 64));
  check_on_device(spec_of(1, 600, 700, 2, 1, 128, 128));
  Spec s = spec_of(2, 67, 69, 4, 2, 64, 64, DType::bf16);
  s.heads_major = true;
  check_on_device(s);
  Spec o = spec_of(1, 65, 64, 2, 2, 64, 64, DType::f64);
  o.out_pad = 3;
  check_on_device(o);
}

TEST_CASE("portable/device: causal in both alignments, windows, fully masked rows") {
  for (DType t : {DType::f32, DType::f64, DType::bf16})
    for (auto [T, S] : {std::pair{130, 130}, std::pair{40, 150}, std::pair{150, 40}})
      for (Alignment a : {Alignment::top_left, Alignment::bottom_right}) {
        Spec s = spec_of(1, T, S, 2, 1, 64, 64, t);
        s.opt.causal = true;
        s.opt.alignment = a;
        INFO(to_string(t), " T=", T, " S=", S);
        check_on_device(s);
      }
  Spec w = spec_of(1, 200, 230, 2, 1, 128, 128);
  w.opt.window_left = 50;
  w.opt.window_right = 7;
  w.opt.alignment = Alignment::bottom_right;
  check_on_device(w);
}

TEST_CASE("portable/device: softcap, bias, ALiBi and masks together; an explicit scale") {
  for (DType t : {DType::f32, DType::f64, DType::f16}) {
    Spec s = spec_of(2, 70, 90, 4, 2, 64, 64, t);
    s.opt.softcap = 5.0;
    s.bias = true;
    s.bias_bcast_b = true;
    s.bias_dtype = DType::f32;
    s.mask = true;
    s.mask_bcast_n = true;
    s.alibi = 2;
    s.opt.causal = true;
    INFO(to_string(t));
    check_on_device(s);
  }
  Spec sc = spec_of(1, 80, 80, 2, 1, 128, 128);
  sc.opt.scale = 0.3;
  check_on_device(sc);
}

TEST_CASE("portable/device: padded and packed varlen, dropout") {
  Spec pad = spec_of(3, 100, 140, 2, 1, 64, 64);
  pad.q_lens = {100, 37, 0};
  pad.k_lens = {140, 0, 65};
  check_on_device(pad);
  for (DType t : {DType::f32, DType::bf16}) {
    Spec pk = spec_of(0, 0, 0, 2, 2, 128, 128, t);
    pk.packed = true;
    pk.q_lens = {5, 0, 130, 64};
    pk.k_lens = {80, 3, 129, 0};
    check_on_device(pk);
  }
  Spec f = spec_of(1, 40, 90, 2, 2, 64, 64);
  f.opt.dropout_p = 0.1;
  f.opt.dropout_seed = 3;
  f.opt.causal = true;
  check_on_device(f);
}

TEST_CASE("portable/device: KOKKOSATTN_PORTABLE_KERNEL forces the tiles or the device kernel") {
  {
    EnvGuard env("KOKKOSATTN_PORTABLE_KERNEL", "tiles");
    CHECK(check_on_device(spec_of(1, 70, 90, 2, 1, 64, 64)) == "portable_tiles_fwd");
  }
  EnvGuard env("KOKKOSATTN_PORTABLE_KERNEL", "device");
  CHECK(check_on_device(spec_of(1, 70, 90, 2, 1, 64, 64)) == "portable_device_fwd_hv64");
  Attn wide(spec_of(1, 5, 7, 2, 1, 32, 160));
  const ForwardProblem p = wide.forward_problem();
  DeviceCopy q(wide.q.view), k(wide.k.view), v(wide.v.view), out(wide.out.view);
  ForwardProblem dp = p;
  dp.q = q.view(), dp.k = k.view(), dp.v = v.view(), dp.out = out.view();
  dp.extras.lse = {};
  ExecContext x;
  x.device = Device::cuda;
  const Support s = portable_backend().supports(dp, validate(dp), x);
  CHECK_FALSE(s.ok);
  CHECK(s.reason.find("value head dims up to 128, got Hv=160") != std::string::npos);
}
