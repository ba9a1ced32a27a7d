// FP8 forward (e4m3, e5m2) in the cudnn backend, on Hopper. Inputs are FP8 codes with
// per-tensor descale factors; the f64 reference runs on the DEQUANTISED inputs (code * descale),
// so input quantisation is not an error here, only what the kernel adds. Scale factors come
// from kokkosattn/fp8_scaling.hpp's delayed-scaling helper fed with the amax values of a first
// run, as in training.
//
// Tolerance per output element (u = unit roundoff of the format: 2^-4 e4m3, 2^-3 e5m2):
//   2u |ref|                      the stored output is rounded to FP8 (any FP8 kernel does that),
//                                 doubled as in BRIEF's rule;
// + 6 u/sqrt(3) sqrt(sum_j P_j^2 v_j^2)
//                                 P is rounded to FP8 before P.V: independent relative errors,
//                                 uniform in [-u, u] (sd u/sqrt 3), summed with weights P_j v_j;
//                                 6 standard deviations;
// + S * sub/2 / scale_s * max|v|  P values below the smallest subnormal `sub` (after scaling;
//                                 e4m3's 2^-9, the larger) lose up to half of it each;
// + sub_o / scale_o               output subnormals.
// Q.K^T is exact FP8 products accumulated in fp32 (error ~1e-7 relative): not counted.
// LSE per row: 1e-3 (fp32 statistics, as for bf16) + 6 u/sqrt(3) sqrt(sum_j P_j^2): cuDNN's
// row sum is of the FP8-rounded P (measured: LSE errors 5e-3 e4m3, 1.1e-2 e5m2, at the size
// of this term), a relative error of the sum with that standard deviation.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gpu/cudnn_device_run.hpp"
#include "gpu/fp8_host.hpp"
#include "kokkosattn/fp8_scaling.hpp"

namespace {

using kattn::DType;
using kattn::Tensor;
using kattn::test::Attn;
using kattn::test::contiguous_view;
using kattn::test::DeviceCopy;
using kattn::test::Fp8Host;
using kattn::test::quantised;
using kattn::test::Scalar;
using kattn::test::Spec;
namespace fp8 = kattn::fp8;

struct Fp8Result {
  bool supported = false;
  std::string reason;
  double err = 0, worst_ratio = 0, lse_err = 0, lse_ratio = 0, amax_o = 0, amax_s = 0;
  double ref_amax_o = 0, ref_amax_p = 0, max_tol = 0;
};

// One FP8 forward against the reference. Run 1 (scale_s = scale_o = 1) measures amax; run 2
// uses the factors delayed scaling derives from them and is the one compared.
Fp8Result run_fp8(DType t, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t H,
                  bool causal) {
  const std::int64_t B = 2;
  Fp8Host q = quantised(t, {B, T, N, H}, 101 + static_cast<std::uint64_t>(T + H), 10);
  Fp8Host k = quantised(t, {B, S, N, H}, 202 + static_cast<std::uint64_t>(S + H), 10);
  Fp8Host v = quantised(t, {B, S, N, H}, 303 + static_cast<std::uint64_t>(S + N), 10);

  Spec s64;
  s64.dtype = DType::f64;
  s64.B = B, s64.T = T, s64.S = S, s64.N = N, s64.K = N, s64.H = H, s64.Hv = H;
  s64.opt.causal = causal;
  Attn ref(s64);
  kattn::test::write_logical(ref.q.view, q.real);
  kattn::test::write_logical(ref.k.view, k.real);
  kattn::test::write_logical(ref.v.view, v.real);
  ref.forward();
  const std::vector<double> want = ref.out_values();
  const std::vector<double> want_lse = ref.lse_values();

  std::vector<std::uint8_t> out_codes(static_cast<std::size_t>(B * T * N * H), 0x7f); // NaN
  std::vector<float> lse_host(static_cast<std::size_t>(B * N * T),
                              std::numeric_limits<float>::quiet_NaN());
  const Tensor out_view = contiguous_view(out_codes.data(), t, {B, T, N, H});
  const Tensor lse_view = contiguous_view(lse_host.data(), DType::f32, {B, N, T});
  DeviceCopy dq(q.view), dk(k.view), dv(v.view), dout(out_view), dlse(lse_view);
  Scalar descale_q(q.descale), descale_k(k.descale), descale_v(v.descale);

  kattn::ForwardProblem p;
  p.q = dq.view(), p.k = dk.view(), p.v = dv.view(), p.out = dout.view();
  p.extras.lse = dlse.view();
  p.options.causal = causal;
  p.options.backend = kattn::Backend::cudnn;
  kattn::ExecContext x;
  x.device = kattn::Device::cuda;

  Fp8Result r;
  double scale_o = 1, scale_s = 1;
  for (int run = 0; run < 2; ++run) {
    Scalar descale_s(static_cast<float>(1 / scale_s)), sc_s(static_cast<float>(scale_s)),
        sc_o(static_cast<float>(scale_o)), amax_s(NAN), amax_o(NAN);
    p.extras.fp8 = {descale_q.dev.view(), descale_k.dev.view(), descale_v.dev.view(),
                    descale_s.dev.view(), sc_s.dev.view(),      sc_o.dev.view(),
                    amax_s.dev.view(),    amax_o.dev.view()};
    try {
      kattn::run_forward(kattn::default_registry(), p, x);
    } catch (const kattn::Unsupported& e) {
      r.reason = e.what();
      return r;
    }
    KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
    r.amax_o = amax_o.read();
    r.amax_s = amax_s.read();
    // Delayed scaling from this run's amax (TransformerEngine's recipe, margin 0).
    fp8::DelayedScaling ds_o(t), ds_s(DType::f8_e4m3);
    ds_o.record(r.amax_o);
    ds_o.update();
    ds_s.record(r.amax_s);
    ds_s.update();
    if (run == 0) {
      scale_o = static_cast<float>(ds_o.scale());
      scale_s = static_cast<float>(ds_s.scale());
    }
  }
  r.supported = true;
  dout.download();
  dlse.download();

  const double u = t == DType::f8_e4m3 ? 0x1p-4 : 0x1p-3;
  const double sub_o = t == DType::f8_e4m3 ? 0x1p-9 : 0x1p-16; // smallest output subnormal
  const double sub_p = 0x1p-9; // P: e4m3's (the larger) in case cuDNN stores P as e4m3
  double max_v = 0;
  for (double x_v : v.real)
    max_v = std::max(max_v, std::abs(x_v));
  // Probabilities of the reference (masked ones 0) for the P-rounding term.
  const std::vector<double> P = kattn::test::probabilities(ref);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < T; ++i)
      for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t h = 0; h < H; ++h) {
          const std::size_t e = static_cast<std::size_t>(((b * T + i) * N + n) * H + h);
          double sq = 0, rowsum = 0;
          for (std::int64_t j = 0; j < S; ++j) {
            if (causal && j > i)
              continue;
            rowsum += P[static_cast<std::size_t>(((b * N + n) * T + i) * S + j)];
          }
          for (std::int64_t j = 0; j < S; ++j) {
            if (causal && j > i)
              continue;
            // Renormalised over the visible keys: probabilities() ignores the mask.
            const double pj = P[static_cast<std::size_t>(((b * N + n) * T + i) * S + j)] / rowsum;
            const double vj = v.real[static_cast<std::size_t>(((b * S + j) * N + n) * H + h)];
            sq += pj * pj * vj * vj;
          }
          const double got = fp8::decode(out_codes[e], t) / scale_o;
          const double tol = 2 * u * std::abs(want[e]) + 6 * u / std::sqrt(3.0) * std::sqrt(sq) +
                             static_cast<double>(S) * sub_p / 2 / scale_s * max_v +
                             sub_o / scale_o + 1e-6;
          const double err = std::abs(got - want[e]);
          r.err = std::max(r.err, std::isnan(err) ? INFINITY : err);
          r.worst_ratio = std::max(r.worst_ratio, std::isnan(err) ? INFINITY : err / tol);
          r.max_tol = std::max(r.max_tol, tol);
          r.ref_amax_o = std::max(r.ref_amax_o, std::abs(want[e]));
        }
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t i = 0; i < T; ++i) {
        double sq = 0, sum = 0;
        for (std::int64_t j = 0; j < S && (!causal || j <= i); ++j) {
          const double pj = P[static_cast<std::size_t>(((b * N + n) * T + i) * S + j)];
          sq += pj * pj;
          sum += pj;
        }
        const std::size_t e = static_cast<std::size_t>((b * N + n) * T + i);
        const double err = std::abs(static_cast<double>(lse_host[e]) - want_lse[e]);
        const double tol = 1e-3 + 6 * u / std::sqrt(3.0) * std::sqrt(sq) / sum;
        r.lse_err = std::max(r.lse_err, std::isnan(err) ? INFINITY : err);
        r.lse_ratio = std::max(r.lse_ratio, std::isnan(err) ? INFINITY : err / tol);
      }
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t i = 0; i < T; ++i) {
        // The largest visible probability of row i: exp(max_j s_ij - lse_i) from the reference.
        double row_max = 0, sum = 0;
        for (std::int64_t j = 0; j < S; ++j)
          if (!causal || j <= i) {
            const double pj = P[static_cast<std::size_t>(((b * N + n) * T + i) * S + j)];
            row_max = std::max(row_max, pj);
            sum += pj;
          }
        r.ref_amax_p = std::max(r.ref_amax_p, row_max / sum);
      }
  MESSAGE(std::string(kattn::to_string(t))
          << " T=" << T << " S=" << S << " N=" << N << " H=" << H << " causal=" << causal
          << ": max err " << r.err << " (worst err/tol " << r.worst_ratio << ", largest tol "
          << r.max_tol << "), lse err " << r.lse_err << " (worst err/tol " << r.lse_ratio
          << "), amax_o " << r.amax_o << " (ref " << r.ref_amax_o << "), amax_s " << r.amax_s
          << " (ref " << r.ref_amax_p << "), scale_o " << scale_o << ", scale_s " << scale_s);
  return r;
}

bool hopper_or_newer() {
  cudaDeviceProp prop{};
  return cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.major >= 9;
}

void check_fp8(const Fp8Result& r) {
  INFO("reason: " << r.reason);
  REQUIRE(r.supported);
  CHECK(r.worst_ratio <= 1.0);
  CHECK(r.lse_ratio <= 1.0);
  // amax_o is max|out| before output quantisation: within the P-rounding part of the tolerance.
  CHECK(std::abs(r.amax_o - r.ref_amax_o) <= r.max_tol);
  // amax_s is max P before quantisation: fp32 softmax, 1e-3 relative.
  CHECK(std::abs(r.amax_s - r.ref_amax_p) <= 1e-3 * r.ref_amax_p);
}

} // namespace

TEST_CASE("cudnn/fp8: e4m3 forward against the reference on dequantised inputs") {
  if (!hopper_or_newer()) {
    MESSAGE("SKIPPED: FP8 attention needs sm_90 or newer");
    return;
  }
  check_fp8(run_fp8(DType::f8_e4m3, 256, 256, 4, 128, false));
  check_fp8(run_fp8(DType::f8_e4m3, 256, 256, 4, 128, true));
  check_fp8(run_fp8(DType::f8_e4m3, 200, 328, 2, 128, false)); // ragged sizes, T != S
}

TEST_CASE("cudnn/fp8: other head dims and e5m2 are served or refused by cuDNN, never wrong") {
  if (!hopper_or_newer())
    return;
  struct C {
    DType t;
    std::int64_t H;
  };
  for (C c : {C{DType::f8_e4m3, 64}, C{DType::f8_e5m2, 128}, C{DType::f8_e5m2, 64}}) {
    const Fp8Result r = run_fp8(c.t, 256, 256, 4, c.H, false);
    MESSAGE(kattn::to_string(c.t) << " H=" << c.H << ": "
                                  << (r.supported ? "served" : "refused: " + r.reason));
    if (r.supported)
      check_fp8(r);
    else
      CHECK(r.reason.find("cuDNN") != std::string::npos);
  }
}
