// The HIP forward kernel's GENERIC path (hip/src/fwd_kernel.hpp built by nvcc, warp 32, no MFMA)
// on a CUDA GPU against the f64 reference: the tiles, masks, online softmax, GQA and varlen
// indexing of the HIP source run on real hardware here. Problems go through
// kattn::hip_kernels::make_flash_fwd_params, the translation a `hip` backend uses.
//
// Tolerance (cudnn_case.hpp explains it; the same kernel structure): max|out - ref| <=
// 2 * max|round(ref) - ref| + 2u * max|v| + 1e-6, u = 2^-8 (bf16) / 2^-11 (f16): the kernel rounds
// P = exp(s - m) to the input dtype before P.V (<= u * max|v| per row) and accumulates in fp32.
// LSE: fp32 from exact products, ~1e-6 relative; 1e-3 absolute still catches log2 vs ln, a
// missing scale or a wrong mask. Fully masked rows must be exactly out 0 / LSE -inf.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpu/cudnn_case.hpp" // unit_roundoff, round_to, max_abs, spec_string
#include "hip/hip_params.hpp"
#include "kattn_hip/flash_fwd.hpp"

namespace {

using kattn::Alignment;
using kattn::DType;
using kattn::test::Attn;
using kattn::test::DeviceCopy;
using kattn::test::Spec;

struct Result {
  bool supported = false;
  std::string reason;
  double err_out = 0, tol_out = 0, err_lse = 0, tol_lse = 0;
  bool out_finite = false, out_all_nan = false;
  std::vector<double> got_out, ref_out, got_lse, ref_lse;
};

Result run_generic(const Spec& spec, cudaStream_t stream = nullptr) {
  Attn low(spec); // inputs rounded to bf16/f16
  Spec s64 = spec;
  s64.dtype = DType::f64;
  Attn ref(s64);
  using kattn::test::read_logical;
  using kattn::test::write_logical;
  write_logical(ref.q.view, read_logical(low.q.view));
  write_logical(ref.k.view, read_logical(low.k.view));
  write_logical(ref.v.view, read_logical(low.v.view));
  ref.forward();

  kattn::test::poison(low.out.view);
  kattn::test::poison(low.lse.view());
  DeviceCopy q(low.q.view), k(low.k.view), v(low.v.view), out(low.out.view), lse(low.lse.view()),
      sq(low.seqlens_q.view()), sk(low.seqlens_k.view()), cq(low.cu_q.view()), ck(low.cu_k.view());
  kattn::ForwardProblem p = low.forward_problem();
  p.q = q.view(), p.k = k.view(), p.v = v.view(), p.out = out.view();
  p.extras.lse = lse.view();
  p.extras.seqlens_q = sq.view(), p.extras.seqlens_k = sk.view();
  p.extras.cu_seqlens_q = cq.view(), p.extras.cu_seqlens_k = ck.view();
  if (low.dims.packed) {
    p.extras.max_seqlen_q = low.dims.T;
    p.extras.max_seqlen_k = low.dims.S;
  }

  Result r;
  const auto made =
      kattn::hip_kernels::make_flash_fwd_params(p, low.dims, kattn::MemorySpace::cuda_device);
  r.supported = made.ok();
  r.reason = made.reason;
  if (r.supported) {
    kattn::hip_kernels::flash_fwd_generic_cuda(made.params, stream);
    KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
  }
  out.download();
  lse.download();

  r.got_out = read_logical(low.out.view);
  r.ref_out = ref.out_values();
  r.out_finite = kattn::test::all_finite(r.got_out);
  r.out_all_nan =
      std::all_of(r.got_out.begin(), r.got_out.end(), [](double g) { return std::isnan(g); });
  const double u = kattn::test::unit_roundoff(spec.dtype);
  double baseline = 0;
  for (double x : r.ref_out)
    baseline = std::max(baseline, std::abs(kattn::test::round_to(spec.dtype, x) - x));
  r.err_out = kattn::test::max_abs_diff(r.got_out, r.ref_out);
  r.tol_out = 2 * baseline + 2 * u * kattn::test::max_abs(read_logical(ref.v.view)) + 1e-6;
  if (spec.lse) {
    r.got_lse = low.lse_values();
    r.ref_lse = ref.lse_values();
    r.err_lse = kattn::test::max_abs_diff(r.got_lse, r.ref_lse); // inf unless -inf rows agree
    r.tol_lse = 1e-3;
  }
  const std::string verdict = r.supported ? std::string() : "  UNSUPPORTED: " + r.reason;
  MESSAGE(kattn::test::spec_string(spec)
          << verdict << "  out err " << r.err_out << " (tol " << r.tol_out << ")  lse err "
          << r.err_lse << " (tol " << r.tol_lse << ")");
  return r;
}

Result check(const Spec& spec, cudaStream_t stream = nullptr) {
  Result r = run_generic(spec, stream);
  INFO(kattn::test::spec_string(spec));
  INFO("reason: " << r.reason);
  REQUIRE(r.supported);
  CHECK(r.out_finite);
  CHECK(r.err_out <= r.tol_out);
  if (spec.lse)
    CHECK(r.err_lse <= r.tol_lse);
  return r;
}

Spec make(DType t, std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K,
          std::int64_t H) {
  Spec s;
  s.dtype = t;
  s.B = B, s.T = T, s.S = S, s.N = N, s.K = K, s.H = H, s.Hv = H;
  s.seed = static_cast<std::uint64_t>(T * 131 + S * 7 + H + N + (t == DType::f16 ? 5 : 0));
  return s;
}

Spec causal(Spec s, Alignment a) {
  s.opt.causal = true;
  s.opt.alignment = a;
  return s;
}

// Rows whose reference LSE is -inf (no visible key) must be exactly out 0 / LSE -inf; returns
// how many such rows the case has, so callers can insist that some exist.
std::size_t check_fully_masked_rows(const Result& r, std::int64_t Hv) {
  std::size_t rows = 0;
  for (std::size_t row = 0; row < r.ref_lse.size(); ++row) {
    if (!std::isinf(r.ref_lse[row]))
      continue;
    ++rows;
    CHECK(r.got_lse[row] == -INFINITY);
  }
  // Output rows are zero exactly where the reference is (no visible key gives exact zeros).
  std::size_t zero_rows = 0;
  for (std::size_t i = 0; i + static_cast<std::size_t>(Hv) <= r.ref_out.size();
       i += static_cast<std::size_t>(Hv)) {
    const bool ref_zero = std::all_of(r.ref_out.begin() + static_cast<std::ptrdiff_t>(i),
                                      r.ref_out.begin() + static_cast<std::ptrdiff_t>(i + Hv),
                                      [](double x) { return x == 0.0; });
    if (!ref_zero)
      continue;
    ++zero_rows;
    for (std::size_t h = i; h < i + static_cast<std::size_t>(Hv); ++h)
      CHECK(r.got_out[h] == 0.0);
  }
  CHECK(zero_rows >= rows);
  return rows;
}

} // namespace

TEST_CASE("hip_generic/shapes: BRIEF's (T, S) list, bf16 and f16, head dims 64 and 128") {
  const std::pair<std::int64_t, std::int64_t> ts[] = {
      {1, 1}, {239, 1}, {799, 3}, {113, 203}, {1023, 1024}};
  for (DType t : {DType::bf16, DType::f16})
    for (std::int64_t H : {64, 128})
      for (auto [T, S] : ts)
        check(make(t, T >= 1000 ? 1 : 2, T, S, 2, 2, H));
}

TEST_CASE("hip_generic/causal: top_left and bottom_right, T < S, T == S, T > S, decode") {
  for (DType t : {DType::bf16, DType::f16})
    for (Alignment a : {Alignment::top_left, Alignment::bottom_right}) {
      check(causal(make(t, 2, 128, 128, 2, 2, 64), a));
      check(causal(make(t, 2, 113, 203, 2, 2, 128), a));
      check(causal(make(t, 2, 1, 300, 2, 2, 64), a)); // decode
      if (a == Alignment::top_left)
        check(causal(make(t, 2, 203, 113, 2, 2, 64), a));
    }
}

TEST_CASE("hip_generic/causal: the two alignments differ when T != S (the test can fail)") {
  const Result tl = check(causal(make(DType::bf16, 1, 64, 200, 2, 2, 64), Alignment::top_left));
  const Result br = check(causal(make(DType::bf16, 1, 64, 200, 2, 2, 64), Alignment::bottom_right));
  CHECK(kattn::test::max_abs_diff(tl.ref_out, br.ref_out) > 10 * tl.tol_out);
  CHECK(kattn::test::max_abs_diff(tl.got_out, br.got_out) > 10 * tl.tol_out);
}

TEST_CASE("hip_generic/fully_masked_rows: T > S bottom_right causal gives out 0, LSE -inf") {
  for (DType t : {DType::bf16, DType::f16})
    for (std::int64_t H : {64, 128}) {
      const Result r = check(causal(make(t, 2, 203, 113, 2, 2, H), Alignment::bottom_right));
      CHECK(check_fully_masked_rows(r, H) == 2 * 2 * (203 - 113)); // B * N * (T - S) rows
    }
  // A window that leaves the last rows without keys (top_left, T > S, right window only).
  Spec w = make(DType::bf16, 1, 300, 100, 2, 1, 64);
  w.opt.window_left = 10;
  w.opt.window_right = 0;
  const Result r = check(w);
  CHECK(check_fully_masked_rows(r, 64) > 0);
}

TEST_CASE("hip_generic/window: inclusive (left, right) windows, both alignments") {
  struct W {
    std::int64_t L, R;
  };
  const W windows[] = {{1, 0}, {0, 0}, {16, 0}, {5, 7}, {-1, 3}, {10, -1}, {31, 31}, {70, 2}};
  for (Alignment a : {Alignment::top_left, Alignment::bottom_right})
    for (W w : windows)
      for (auto [T, S] : {std::pair<std::int64_t, std::int64_t>{128, 128}, {97, 301}, {150, 90}}) {
        Spec s = make(w.L == 5 ? DType::f16 : DType::bf16, 2, T, S, 2, 2, w.R == 31 ? 128 : 64);
        s.opt.window_left = w.L;
        s.opt.window_right = w.R;
        s.opt.alignment = a;
        check(s);
      }
}

TEST_CASE("hip_generic/window: left L and L + 1 differ (inclusive bound, the test can fail)") {
  for (std::int64_t L : {0, 1, 7}) {
    Spec a = make(DType::bf16, 1, 64, 64, 2, 2, 64);
    a.opt.window_left = L;
    a.opt.window_right = 0;
    Spec b = a;
    b.opt.window_left = L + 1;
    const Result ra = check(a), rb = check(b);
    CHECK(kattn::test::max_abs_diff(ra.ref_out, rb.ref_out) > 10 * ra.tol_out);
  }
}

TEST_CASE("hip_generic/gqa: grouped and multi-query attention") {
  check(make(DType::bf16, 2, 113, 203, 8, 2, 64));
  check(make(DType::f16, 2, 113, 203, 8, 1, 128));
  check(causal(make(DType::bf16, 2, 128, 128, 8, 2, 64), Alignment::bottom_right));
  check(causal(make(DType::f16, 1, 77, 300, 6, 3, 128), Alignment::top_left));
}

TEST_CASE("hip_generic/padded: per-batch lengths, rows past q_len give out 0 / LSE -inf") {
  for (Alignment a : {Alignment::top_left, Alignment::bottom_right})
    for (DType t : {DType::bf16, DType::f16}) {
      Spec s = make(t, 3, 150, 170, 4, 2, t == DType::bf16 ? 64 : 128);
      s.q_lens = {150, 37, 0};
      s.k_lens = {170, 1, 90};
      check(s);
      s.opt.causal = true;
      s.opt.alignment = a;
      const Result r = check(s);
      CHECK(check_fully_masked_rows(r, s.Hv) >= static_cast<std::size_t>(4 * (150 - 37 + 150)));
      Spec k_only = make(t, 2, 65, 130, 2, 1, 64); // only key lengths given
      k_only.k_lens = {130, 17};
      k_only.opt.window_left = 20;
      k_only.opt.window_right = 3;
      k_only.opt.alignment = a;
      check(k_only);
    }
}

TEST_CASE("hip_generic/packed: cu_seqlens varlen, LSE [N, total]") {
  for (Alignment a : {Alignment::top_left, Alignment::bottom_right})
    for (DType t : {DType::bf16, DType::f16}) {
      Spec s = make(t, 0, 0, 0, 4, 2, t == DType::bf16 ? 128 : 64);
      s.packed = true;
      s.q_lens = {1, 77, 130, 64};
      s.k_lens = {5, 200, 64, 64};
      check(s);
      s.opt.causal = true;
      s.opt.alignment = a;
      check(s);
      s.opt.window_left = 9;
      s.opt.window_right = 4;
      s.opt.causal = false;
      check(s);
    }
}

TEST_CASE("hip_generic/lse_and_strides: LSE optional; [B, N, T, H] storage as a strided view") {
  Spec s = make(DType::bf16, 3, 77, 130, 4, 2, 64);
  s.lse = false;
  check(s);
  s.lse = true;
  s.heads_major = true;
  check(s);
  check(causal(s, Alignment::bottom_right));
}

TEST_CASE("hip_generic/inputs: scaled, outliers, custom scale, softcap") {
  Spec s = make(DType::bf16, 2, 113, 203, 2, 2, 64);
  s.q_mult = 5.0, s.k_mult = 3.0;
  check(s);
  Spec o = make(DType::f16, 2, 128, 257, 2, 2, 128);
  o.outliers = true;
  check(o);
  Spec c = make(DType::f16, 2, 128, 128, 2, 2, 64);
  c.opt.scale = 0.3;
  check(c);
  Spec sc = make(DType::bf16, 2, 100, 140, 2, 2, 64);
  sc.q_mult = 4.0;
  sc.opt.softcap = 5.0;
  const Result with = check(sc);
  sc.opt.softcap = 0.0;
  const Result without = check(sc);
  CHECK(kattn::test::max_abs_diff(with.ref_out, without.ref_out) > 10 * with.tol_out);
}

TEST_CASE("hip_generic/stream: the framework-free entry on a created stream") {
  cudaStream_t stream = nullptr;
  KATTN_CUDA_REQUIRE(cudaStreamCreate(&stream));
  check(causal(make(DType::bf16, 2, 130, 130, 2, 2, 128), Alignment::top_left), stream);
  KATTN_CUDA_REQUIRE(cudaStreamDestroy(stream));
}

TEST_CASE("hip_generic/refusals: unsupported problems name the reason, outputs untouched") {
  Spec h = make(DType::bf16, 1, 16, 16, 2, 2, 96);
  const Result rh = run_generic(h);
  CHECK_FALSE(rh.supported);
  CHECK(rh.reason.find("H == Hv in {64, 128}") != std::string::npos);
  CHECK(rh.out_all_nan);
  Spec f = make(DType::f32, 1, 16, 16, 2, 2, 64);
  const Result rf = run_generic(f);
  CHECK_FALSE(rf.supported);
  CHECK(rf.reason.find("bf16 or f16") != std::string::npos);
  CHECK(rf.out_all_nan);
  Spec b = make(DType::bf16, 1, 16, 16, 2, 2, 64);
  b.bias = true;
  b.bias_dtype = DType::bf16;
  const Result rb = run_generic(b);
  CHECK_FALSE(rb.supported);
  CHECK(rb.reason.find("bias") != std::string::npos);
  // Host memory is refused by the translation (the kernels need device pointers).
  Attn host(make(DType::bf16, 1, 16, 16, 2, 2, 64));
  const auto made = kattn::hip_kernels::make_flash_fwd_params(host.forward_problem(), host.dims,
                                                              kattn::MemorySpace::cuda_device);
  CHECK_FALSE(made.ok());
  CHECK(made.reason.find("cuda_device") != std::string::npos);
  // The entry itself re-checks its params.
  kattn::FlashFwdParams bad = made.params;
  bad.H = bad.Hv = 96;
  CHECK_THROWS_AS(kattn::hip_kernels::flash_fwd_generic_cuda(bad, nullptr), std::invalid_argument);
  bad.H = bad.Hv = 64;
  CHECK(kattn::hip_kernels::kernel_name(bad, true) == "hip_mfma_fwd_bf16_h64");
  CHECK(kattn::hip_kernels::kernel_name(bad, false) == "hip_generic_fwd_bf16_h64");
}
