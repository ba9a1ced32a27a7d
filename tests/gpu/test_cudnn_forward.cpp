// The cudnn backend on a real GPU against the f64 reference (tolerances: cudnn_case.hpp).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <string>

#include "cudnn/cudnn.hpp"
#include "gpu/cudnn_case.hpp"
#include "kokkosattn/dispatch.hpp"

namespace {

using kattn::Alignment;
using kattn::DType;
using kattn::test::check_matches;
using kattn::test::run_cudnn_case;
using kattn::test::Spec;

Spec make(DType t, std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K,
          std::int64_t H, std::int64_t Hv = -1) {
  Spec s;
  s.dtype = t;
  s.B = B, s.T = T, s.S = S, s.N = N, s.K = K, s.H = H, s.Hv = Hv < 0 ? H : Hv;
  s.seed = static_cast<std::uint64_t>(T * 131 + S * 7 + H + N);
  return s;
}

Spec causal(Spec s, Alignment a) {
  s.opt.causal = true;
  s.opt.alignment = a;
  return s;
}

} // namespace

TEST_CASE("cudnn/shapes: non-causal forward matches the reference, bf16 and f16") {
  const std::pair<std::int64_t, std::int64_t> ts[] = {{1, 1},     {239, 1},   {799, 3},
                                                      {113, 203}, {128, 128}, {1023, 1024}};
  for (DType t : {DType::bf16, DType::f16})
    for (auto [T, S] : ts)
      check_matches(make(t, 2, T, S, 2, 2, 64));
  for (std::int64_t H : {96, 128, 192, 256})
    check_matches(make(DType::bf16, 1, 113, 203, 2, 2, H));
}

TEST_CASE("cudnn/causal: top_left and bottom_right alignment") {
  for (DType t : {DType::bf16, DType::f16}) {
    check_matches(causal(make(t, 2, 128, 128, 2, 2, 64), Alignment::top_left));
    check_matches(causal(make(t, 2, 113, 203, 2, 2, 64), Alignment::top_left));
    check_matches(causal(make(t, 2, 203, 113, 2, 2, 64), Alignment::top_left)); // T > S
    check_matches(causal(make(t, 2, 113, 203, 2, 2, 64), Alignment::bottom_right));
    check_matches(causal(make(t, 2, 128, 128, 2, 2, 128), Alignment::bottom_right));
    check_matches(causal(make(t, 2, 1, 300, 2, 2, 64), Alignment::bottom_right)); // decode
  }
}

TEST_CASE("cudnn/causal: the two alignments differ when T != S (the test can fail)") {
  const auto tl =
      run_cudnn_case(causal(make(DType::bf16, 1, 64, 200, 2, 2, 64), Alignment::top_left));
  const auto br =
      run_cudnn_case(causal(make(DType::bf16, 1, 64, 200, 2, 2, 64), Alignment::bottom_right));
  REQUIRE(tl.supported);
  REQUIRE(br.supported);
  CHECK(kattn::test::max_abs_diff(tl.ref_out, br.ref_out) > 10 * tl.tol_out);
}

TEST_CASE("cudnn/fully_masked_rows: T > S bottom_right causal is refused, outputs untouched") {
  Spec s = causal(make(DType::bf16, 1, 203, 113, 2, 2, 64), Alignment::bottom_right);
  const auto r = run_cudnn_case(s);
  CHECK_FALSE(r.supported);
  CHECK(r.reason.find("no visible key") != std::string::npos);
  CHECK(r.out_all_nan);
}

TEST_CASE("cudnn/window: inclusive (left, right) windows, both alignments") {
  struct W {
    std::int64_t L, R;
  };
  const W windows[] = {{1, 0}, {0, 0}, {16, 0}, {5, 7}, {-1, 3}, {10, -1}, {31, 31}};
  for (Alignment a : {Alignment::top_left, Alignment::bottom_right})
    for (W w : windows)
      for (auto [T, S] : {std::pair<std::int64_t, std::int64_t>{128, 128}, {97, 301}}) {
        Spec s = make(DType::bf16, 2, T, S, 2, 2, 64);
        s.opt.window_left = w.L;
        s.opt.window_right = w.R;
        s.opt.alignment = a;
        check_matches(s);
      }
}

TEST_CASE("cudnn/window: off-by-one regression (inclusive L is cuDNN's exclusive L+1)") {
  // Left windows L and L+1 give clearly different references, so the translation L -> L+1
  // (and not L) is what makes the comparison pass.
  for (std::int64_t L : {0, 1, 7}) {
    Spec a = make(DType::bf16, 1, 64, 64, 2, 2, 64);
    a.opt.window_left = L;
    a.opt.window_right = 0;
    Spec b = a;
    b.opt.window_left = L + 1;
    const auto ra = run_cudnn_case(a);
    const auto rb = run_cudnn_case(b);
    REQUIRE(ra.supported);
    REQUIRE(rb.supported);
    CHECK(ra.err_out <= ra.tol_out);
    CHECK(rb.err_out <= rb.tol_out);
    CHECK(kattn::test::max_abs_diff(ra.ref_out, rb.ref_out) > 10 * ra.tol_out);
  }
}

TEST_CASE("cudnn/gqa: grouped and multi-query attention") {
  check_matches(make(DType::bf16, 2, 113, 203, 8, 2, 64));
  check_matches(make(DType::bf16, 2, 113, 203, 8, 1, 128));
  check_matches(causal(make(DType::f16, 2, 128, 128, 8, 2, 64), Alignment::bottom_right));
}

TEST_CASE("cudnn/hv_ne_h: value head dim differs from the q/k head dim") {
  check_matches(make(DType::bf16, 2, 113, 203, 2, 2, 128, 64));
  check_matches(make(DType::bf16, 2, 64, 64, 2, 2, 64, 128));
}

TEST_CASE("cudnn/lse: natural-log LSE written into our [B, N, T] layout; LSE optional") {
  Spec s = make(DType::bf16, 3, 77, 130, 4, 2, 64);
  check_matches(s); // compares LSE too
  s.lse = false;
  check_matches(s);
}

TEST_CASE("cudnn/strides: PyTorch [B, N, T, H] storage as a strided view") {
  Spec s = make(DType::bf16, 2, 113, 203, 4, 2, 64);
  s.heads_major = true;
  check_matches(s);
  check_matches(causal(s, Alignment::bottom_right));
}

TEST_CASE("cudnn/bias: additive bias, full and broadcast over batch or heads") {
  Spec s = make(DType::bf16, 2, 64, 96, 2, 2, 64);
  s.bias = true;
  check_matches(s);
  s.bias_bcast_b = true;
  check_matches(s);
  s.bias_bcast_b = false;
  s.bias_bcast_n = true;
  check_matches(s);
  Spec c = causal(make(DType::f16, 2, 96, 96, 2, 2, 64), Alignment::top_left);
  c.bias = true;
  check_matches(c);
}

TEST_CASE("cudnn/inputs: scaled, outlier and custom-scale inputs") {
  Spec s = make(DType::bf16, 2, 113, 203, 2, 2, 64);
  s.q_mult = 5.0, s.k_mult = 3.0;
  check_matches(s);
  Spec o = make(DType::bf16, 2, 128, 128, 2, 2, 64);
  o.outliers = true;
  check_matches(o);
  Spec c = make(DType::f16, 2, 128, 128, 2, 2, 64);
  c.opt.scale = 0.3;
  check_matches(c);
}

TEST_CASE("cudnn/dispatch: explain, graph cache reuse, framework-free entry on a stream") {
  Spec s = make(DType::bf16, 1, 64, 64, 2, 2, 64);
  check_matches(s);
  const std::size_t n = kattn::cudnn::graphs_built();
  check_matches(s); // same key: no new graph
  CHECK(kattn::cudnn::graphs_built() == n);
  CHECK(kattn::cudnn::cached_graphs() <= 64); // bounded
  MESSAGE("cudnn description: " << kattn::cudnn::versions());
  CHECK(kattn::cudnn::versions().find("cuDNN 9.") == 0);

  cudaStream_t stream = nullptr;
  KATTN_CUDA_REQUIRE(cudaStreamCreate(&stream));
  check_matches(s, stream); // a new stream is a new key
  CHECK(kattn::cudnn::graphs_built() == n + 1);
  KATTN_CUDA_REQUIRE(cudaStreamDestroy(stream));
}

TEST_CASE("cudnn/errors: refusals name the argument") {
  using kattn::test::Attn;
  Spec s = make(DType::bf16, 1, 16, 16, 2, 2, 64);
  s.opt.backend = kattn::Backend::cudnn;
  Attn host(s); // host memory
  kattn::ExecContext x;
  x.device = kattn::Device::cuda;
  CHECK_THROWS_WITH_AS(kattn::run_forward(kattn::default_registry(), host.forward_problem(), x),
                       doctest::Contains("cuda_device"), kattn::Unsupported);
  Spec f = make(DType::f32, 1, 16, 16, 2, 2, 64);
  const auto rf = run_cudnn_case(f);
  CHECK_FALSE(rf.supported);
  // Names the argument, the dtypes cuDNN takes (bf16, f16 and the FP8 ones) and what came.
  CHECK(rf.reason.find("q: expected bf16, f16") != std::string::npos);
  CHECK(rf.reason.find("got f32") != std::string::npos);
  Spec h = make(DType::bf16, 1, 16, 16, 2, 2, 60);
  const auto rh = run_cudnn_case(h);
  CHECK_FALSE(rh.supported);
  CHECK(rh.reason.find("multiples of 8") != std::string::npos);
}
