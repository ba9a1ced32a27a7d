// The portable backward on Kokkos::Cuda through device pointers: the GPU kernels of
// backends/portable/portable_device_backward_kernel.hpp (head dims up to 128, fp32
// accumulation, no score extras) and the team-scratch tiles for the rest, against the fp64
// reference's gradients on the same rounded inputs. Tolerances: gradient_tol() in
// unit/test_portable_helpers.hpp (the host backward's: a few fp32 ulps of the largest gradient
// per term summed, one result ulp for f16/bf16), with gradients that are 0 by structure (rows
// past the lengths, rows that see no key) checked bit for bit.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/dispatch_fixture.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_check.hpp"
#include "gpu/device_forward.hpp"
#include "gpu/structural_zeros.hpp"
#include "unit/test_portable_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

// lo's backward tensors copied to the GPU (gradients as they are on the host: poison them
// first) and the backward problem pointing at the copies.
struct DeviceBackward {
  DeviceForward fwd;
  DeviceCopy dout, dq, dk, dv, dsinks;
  BackwardProblem problem;

  explicit DeviceBackward(Attn& lo)
      : fwd(lo), dout(lo.dout.view), dq(lo.dq.view), dk(lo.dk.view), dv(lo.dv.view),
        dsinks(lo.dsinks.view()), problem(lo.backward_problem(false)) {
    problem.forward = fwd.problem;
    problem.dout = dout.view(), problem.dq = dq.view(), problem.dk = dk.view();
    problem.dv = dv.view();
    problem.dsinks = dsinks.view();
  }
};

ExecContext cuda_context() {
  ExecContext x;
  x.device = Device::cuda;
  return x;
}

std::string describe(const Spec& s) {
  return std::string(to_string(s.dtype)) + " B=" + std::to_string(s.B) +
         " T=" + std::to_string(s.T) + " S=" + std::to_string(s.S) + " N=" + std::to_string(s.N) +
         " K=" + std::to_string(s.K) + " H=" + std::to_string(s.H) + " Hv=" + std::to_string(s.Hv) +
         (s.opt.causal ? " causal" : "") + (s.packed ? " packed" : "");
}

// The portable forward then backward of spec's problem on the CUDA device (gradients
// NaN-poisoned before each of `repeats` runs), checked against the fp64 reference; returns
// the kernel the support check names. repeats > 1: every run's gradients must be bitwise equal.
std::string check_backward_on_device(const Spec& spec, int repeats = 1) {
  Attn lo(spec);
  const Gradients truth = fp64_gradients(lo, false);
  poison(lo.out.view);
  poison(lo.lse.view());
  poison(lo.dq.view);
  poison(lo.dk.view);
  poison(lo.dv.view);
  poison(lo.dsinks.view());
  DeviceBackward dev(lo);
  BackwardProblem& b = dev.problem;
  DeviceCopy &dq = dev.dq, &dk = dev.dk, &dv = dev.dv;
  const ExecContext x = cuda_context();
  portable_backend().forward(b.forward, validate(b.forward), x);
  const Dims d = validate(b);
  const Support s = portable_backend().supports(b, d, x);
  INFO(describe(spec), " support: ", s.reason);
  REQUIRE(s.ok);
  std::vector<std::vector<double>> first;
  for (int rep = 0; rep < repeats; ++rep) {
    dq.upload(), dk.upload(), dv.upload(), dev.dsinks.upload(); // the poison again
    portable_backend().backward(b, d, x);
    KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
    dq.download(), dk.download(), dv.download(), dev.dsinks.download();
    const Gradients got = read_gradients(lo, false);
    if (rep > 0) {
      CHECK(std::memcmp(first[0].data(), got.dq.data(), got.dq.size() * sizeof(double)) == 0);
      CHECK(std::memcmp(first[1].data(), got.dk.data(), got.dk.size() * sizeof(double)) == 0);
      CHECK(std::memcmp(first[2].data(), got.dv.data(), got.dv.size() * sizeof(double)) == 0);
      continue;
    }
    first = {got.dq, got.dk, got.dv};
    const std::string names[3] = {"dq", "dk", "dv"};
    const std::vector<double>* want[3] = {&truth.dq, &truth.dk, &truth.dv};
    for (int i = 0; i < 3; ++i) {
      const double tol = gradient_tol(spec.dtype, max_abs(*want[i]));
      const double err = max_abs_diff(first[i], *want[i]);
      MESSAGE(describe(spec) << " [" << s.kernel << "] " << names[i] << " err " << err << " (tol "
                             << tol << ")");
      CHECK(all_finite(first[i]));
      CHECK(err <= tol);
    }
    if (spec.sinks) { // f32, summed per head over its rows
      const double tol = std::max(gradient_tol(spec.dtype, max_abs(truth.dsinks)),
                                  gradient_tol(DType::f32, max_abs(truth.dsinks)));
      const double err = max_abs_diff(got.dsinks, truth.dsinks);
      MESSAGE(describe(spec) << " [" << s.kernel << "] dsinks err " << err << " (tol " << tol
                             << ")");
      CHECK(all_finite(got.dsinks));
      CHECK(err <= tol);
    }
    CHECK(structural_zeros_exact(lo.spec, got.dq, got.dk, got.dv));
  }
  return s.kernel;
}

constexpr DType fp32_acc_dtypes[] = {DType::f32, DType::f16, DType::bf16};

} // namespace

TEST_CASE("portable/device backward: every dtype, head dims 64 and 128, partial tiles, GQA") {
  for (DType t : fp32_acc_dtypes) {
    INFO(to_string(t));
    // 130 rows and 200 keys: partial query blocks and key blocks; GQA 4/2.
    CHECK(check_backward_on_device(spec_of(2, 130, 200, 4, 2, 64, 64, t)) ==
          "portable_device_bwd_hd64");
    CHECK(check_backward_on_device(spec_of(1, 70, 129, 2, 1, 128, 128, t)) ==
          "portable_device_bwd_hd128");
    CHECK(check_backward_on_device(spec_of(1, 33, 65, 2, 2, 96, 40, t)) ==
          "portable_device_bwd_hd128");
  }
  // f32 with the forward's LSE reads it and the forward's out (portable_device_row_stats.hpp),
  // as every case above; without it the prep pass recomputes both, as for the 16-bit types.
  for (std::int64_t H : {64, 128}) {
    Spec nolse = spec_of(2, 130, 200, 4, 2, H, H, DType::f32);
    nolse.lse = false;
    CHECK(check_backward_on_device(nolse) == "portable_device_bwd_hd" + std::to_string(H));
  }
  // f64 and head dims past the register tiles keep the tiles.
  CHECK(check_backward_on_device(spec_of(1, 40, 50, 2, 1, 64, 64, DType::f64)) ==
        "portable_tiles_bwd");
  CHECK(check_backward_on_device(spec_of(1, 40, 50, 2, 1, 32, 160)) == "portable_tiles_bwd");
}

// Quads only for unit head-dim strides, token strides % 4 == 0 and aligned first rows; else
// element by element: both, with head dims off the quads and a partial last chunk.
TEST_CASE("portable/device backward: head dims off the quads, odd strides, other storage") {
  for (DType t : fp32_acc_dtypes) {
    INFO(to_string(t));
    check_backward_on_device(spec_of(1, 70, 90, 2, 1, 33, 63, t));
    check_backward_on_device(spec_of(1, 70, 90, 1, 1, 36, 100, t));
    check_backward_on_device(spec_of(1, 50, 77, 2, 1, 68, 127, t));
    Spec s = spec_of(1, 45, 67, 2, 1, 64, 64, t);
    s.seq_major = true;
    s.opt.causal = true;
    check_backward_on_device(s);
  }
  Spec h = spec_of(2, 67, 69, 4, 2, 64, 64, DType::bf16);
  h.heads_major = true;
  check_backward_on_device(h);
}

TEST_CASE("portable/device backward: causal in both alignments, windows, T = 1, MQA") {
  for (DType t : {DType::f32, DType::bf16})
    for (auto [T, S] : {std::pair{130, 130}, std::pair{40, 150}, std::pair{150, 40}})
      for (Alignment a : {Alignment::top_left, Alignment::bottom_right}) {
        Spec s = spec_of(1, T, S, 2, 1, 64, 64, t);
        s.opt.causal = true;
        s.opt.alignment = a;
        INFO(to_string(t), " T=", T, " S=", S);
        check_backward_on_device(s);
      }
  Spec w = spec_of(1, 200, 230, 2, 1, 128, 128);
  w.opt.window_left = 50;
  w.opt.window_right = 7;
  w.opt.alignment = Alignment::bottom_right;
  check_backward_on_device(w);
  check_backward_on_device(spec_of(2, 1, 300, 4, 1, 64, 64));
  check_backward_on_device(spec_of(1, 300, 1, 4, 1, 128, 64));
  check_backward_on_device(spec_of(1, 600, 700, 4, 1, 128, 128));
}

TEST_CASE("portable/device backward: padded and packed varlen with empty sequences") {
  Spec pad = spec_of(3, 100, 140, 2, 1, 64, 64);
  pad.q_lens = {100, 37, 0};
  pad.k_lens = {140, 0, 65};
  check_backward_on_device(pad);
  for (DType t : {DType::f32, DType::bf16}) {
    Spec pk = spec_of(0, 0, 0, 2, 2, 128, 128, t);
    pk.packed = true;
    pk.q_lens = {5, 0, 130, 64};
    pk.k_lens = {80, 3, 129, 0};
    pk.opt.causal = true;
    pk.opt.alignment = Alignment::bottom_right;
    check_backward_on_device(pk);
  }
}

TEST_CASE("portable/device backward: bitwise repeatable; extras on the tiles, forced kernels") {
  check_backward_on_device(spec_of(2, 200, 260, 4, 2, 128, 128), 5);
  Spec ex = spec_of(1, 70, 90, 2, 1, 64, 64);
  ex.opt.softcap = 5.0;
  CHECK(check_backward_on_device(ex) == "portable_tiles_bwd");
  {
    EnvGuard env("KOKKOSATTN_PORTABLE_KERNEL", "tiles");
    CHECK(check_backward_on_device(spec_of(1, 70, 90, 2, 1, 64, 64)) == "portable_tiles_bwd");
  }
  EnvGuard env("KOKKOSATTN_PORTABLE_KERNEL", "device");
  Attn a(ex);
  DeviceBackward dev(a);
  const Support s = portable_backend().supports(dev.problem, validate(dev.problem), cuda_context());
  CHECK_FALSE(s.ok);
  CHECK(s.reason.find("the device backward serves no softcap") != std::string::npos);
}

// Attention sinks (rule sinks) on the device: the forward's device kernel adds each head's sink
// to the row's denominator (Common::end_row, as the team tiles), the backward runs the tiles
// (the device backward kernel serves plain problems) and sums dsinks per head.
TEST_CASE("portable/device: attention sinks, forward and backward (dsinks)") {
  for (DType t : fp32_acc_dtypes) {
    INFO(to_string(t));
    Spec s = spec_of(2, 130, 150, 4, 2, 64, 64, t);
    s.sinks = true;
    check_on_device(portable_backend(), s);
    CHECK(check_backward_on_device(s) == "portable_tiles_bwd");
  }
  Spec k = spec_of(1, 90, 40, 2, 1, 128, 128, DType::f32); // keyless rows: LSE = the sink
  k.sinks = true;
  k.opt.causal = true;
  k.opt.alignment = Alignment::bottom_right;
  check_on_device(portable_backend(), k);
  check_backward_on_device(k);
  Spec v = spec_of(1, 1, 1, 2, 1, 64, 64, DType::bf16); // packed, an empty sequence, softcap
  v.sinks = true;
  v.packed = true;
  v.q_lens = {33, 0, 70};
  v.k_lens = {40, 5, 65};
  v.opt.softcap = 5.0;
  check_on_device(portable_backend(), v);
  check_backward_on_device(v);
}
