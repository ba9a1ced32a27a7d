// KokkosAttn::sdpa / sdpa_backward on host execution spaces against the reference backend.
// Tolerance for f32 outputs: naive (fp32 accumulation) vs reference (double accumulation,
// rounded to f32) with unit-variance inputs and H <= 64: a few 1e-7 (see tolerance_for in
// test_naive_helpers.hpp); 1e-5 keeps >10x headroom. f64: 1e-12 (summation order only).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "naive/naive_forward.hpp"
#include "test_kokkos_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// sdpa on `exec` with LayoutRight f32 Views of the given shape vs the reference.
template <class ExecSpace>
void check_sdpa_on(const ExecSpace& exec, const Options& o = {}, int T = 12, int S = 17) {
  const int B = 2, N = 4, K = 2, H = 32;
  View4<float> q("q", B, T, N, H), k("k", B, S, K, H), v("v", B, S, K, H);
  View4<float> out("out", B, T, N, H), ref("ref", B, T, N, H);
  fill_random(q, 1);
  fill_random(k, 2);
  fill_random(v, 3);
  fill_nan(out);
  KokkosAttn::sdpa(exec, q, k, v, out, o);
  exec.fence(); // sdpa does not fence: stream semantics
  reference_out(q, k, v, ref, o);
  CHECK(max_diff4(out, ref) <= 1e-5);
}

} // namespace

#ifdef KOKKOS_ENABLE_OPENMP
TEST_CASE("kokkos/sdpa: OpenMP execution space matches the reference") {
  check_sdpa_on(Kokkos::OpenMP());
  Options causal;
  causal.causal = true;
  causal.alignment = Alignment::bottom_right;
  check_sdpa_on(Kokkos::OpenMP(), causal, 20, 9); // includes fully masked rows
}

TEST_CASE("kokkos/sdpa: kernels run on the execution space instance passed in") {
  // A partition of the OpenMP pool is its own instance; every naive kernel must be launched on
  // the instance given to sdpa, as Kokkos Tools report it (OpenMP reports one instance id for
  // all its instances, so here this pins the device type; on Cuda/HIP the id is per stream),
  // and the result on that instance must be right.
  const auto parts = Kokkos::Experimental::partition_space(Kokkos::OpenMP(), 1, 1);
  const std::uint32_t want = Kokkos::Tools::Experimental::device_id(parts[1]);
  static std::vector<std::pair<std::string, std::uint32_t>> launches;
  launches.clear();
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(
      [](const char* name, std::uint32_t dev, std::uint64_t*) {
        launches.emplace_back(name, dev);
      });
  View4<float> q("q", 1, 4, 2, 8), k("k", 1, 5, 2, 8), v("v", 1, 5, 2, 8), out("out", 1, 4, 2, 8),
      ref("ref", 1, 4, 2, 8);
  fill_random(q, 1);
  fill_random(k, 2);
  fill_random(v, 3);
  fill_nan(out);
  Options o;
  o.backend = Backend::naive;
  KokkosAttn::sdpa(parts[1], q, k, v, out, o);
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
  parts[1].fence();
  int naive_kernels = 0;
  for (const auto& [name, dev] : launches)
    if (contains(name, "KokkosAttn::naive")) {
      ++naive_kernels;
      INFO(name);
      CHECK(dev == want);
    }
  // scores, softmax, P V; with Kokkos Kernels: q, k, v packs, softmax (which applies the score
  // rule), store (the GEMMs themselves run in the BLAS TPL or in Kokkos Kernels' kernels, not
  // named ours).
  CHECK(naive_kernels == (naive::have_kokkos_kernels ? 5 : 3));
  reference_out(q, k, v, ref);
  CHECK(max_diff4(out, ref) <= 1e-5);
}
#endif

#ifdef KOKKOS_ENABLE_SERIAL
TEST_CASE("kokkos/sdpa: Serial execution space matches the reference") {
  check_sdpa_on(Kokkos::Serial());
  Options window;
  window.window_left = 3;
  window.window_right = 1;
  check_sdpa_on(Kokkos::Serial(), window);
}
#endif

TEST_CASE("kokkos/sdpa: DefaultHostExecutionSpace with a window and GQA") {
  Options o;
  o.window_left = 4;
  o.window_right = 2;
  o.alignment = Alignment::bottom_right;
  check_sdpa_on(Kokkos::DefaultHostExecutionSpace(), o, 9, 15);
}

TEST_CASE("semantics/strides: sdpa on LayoutLeft and PyTorch-style LayoutStride Views") {
  const Kokkos::DefaultHostExecutionSpace exec;
  const int B = 2, T = 7, S = 10, N = 4, H = 16;
  // LayoutLeft: batch is the fastest dimension.
  View4<float, Kokkos::LayoutLeft> q("q", B, T, N, H), k("k", B, S, N, H), v("v", B, S, N, H),
      out("out", B, T, N, H);
  View4<float> ref("ref", B, T, N, H);
  fill_random(q, 4);
  fill_random(k, 5);
  fill_random(v, 6);
  fill_nan(out);
  KokkosAttn::sdpa(exec, q, k, v, out);
  exec.fence();
  reference_out(q, k, v, ref);
  CHECK(max_diff4(out, ref) <= 1e-5);

  // [B, N, T, H] storage (PyTorch's default) viewed as [B, T, N, H].
  using Strided = Kokkos::View<float****, Kokkos::LayoutStride, Kokkos::HostSpace>;
  const auto bnth = [&](const char* label, int L) {
    View4<float> storage(label, B, N, L, H);
    return std::pair{
        storage, Strided(storage.data(), Kokkos::LayoutStride(B, N * L * H, L, H, N, L * H, H, 1))};
  };
  auto [qs, qv] = bnth("q", T);
  auto [ks, kv] = bnth("k", S);
  auto [vs, vv] = bnth("v", S);
  auto [os, ov] = bnth("out", T);
  fill_random(qv, 7);
  fill_random(kv, 8);
  fill_random(vv, 9);
  fill_nan(os);
  Options o;
  o.causal = true;
  KokkosAttn::sdpa(exec, qv, kv, vv, ov, o);
  exec.fence();
  reference_out(qv, kv, vv, ref, o);
  CHECK(max_diff4(ov, ref) <= 1e-5);
}

TEST_CASE("semantics/lse: sdpa with extras from Views: bias and LSE output") {
  const Kokkos::DefaultHostExecutionSpace exec;
  const int B = 2, T = 6, S = 9, N = 2, H = 8;
  View4<float> q("q", B, T, N, H), k("k", B, S, N, H), v("v", B, S, N, H), out("out", B, T, N, H),
      ref("ref", B, T, N, H);
  View4<float> bias("bias", 1, N, T, S); // broadcast over the batch
  Kokkos::View<float***, Kokkos::HostSpace> lse("lse", B, N, T), ref_lse("ref_lse", B, N, T);
  fill_random(q, 1);
  fill_random(k, 2);
  fill_random(v, 3);
  fill_random(bias, 4);
  fill_nan(out);
  Kokkos::deep_copy(lse, std::numeric_limits<float>::quiet_NaN());
  Extras e;
  e.bias = KokkosAttn::as_tensor(bias);
  e.lse = KokkosAttn::as_tensor(lse);
  KokkosAttn::sdpa(exec, q, k, v, out, {}, e);
  exec.fence();
  Extras re = e;
  re.lse = KokkosAttn::as_tensor(ref_lse);
  reference_out(q, k, v, ref, {}, re);
  CHECK(max_diff4(out, ref) <= 1e-5);
  double m = 0;
  for (int b = 0; b < B; ++b)
    for (int n = 0; n < N; ++n)
      for (int i = 0; i < T; ++i)
        m = std::max(m, std::abs(double(lse(b, n, i)) - ref_lse(b, n, i)));
  CHECK(m <= 1e-5); // |lse| < 10 here: f32 ulp ~1e-6, plus fp32 accumulation
}

TEST_CASE("semantics/dtypes: sdpa on f64 Views accumulates in double") {
  const Kokkos::DefaultHostExecutionSpace exec;
  View4<double> q("q", 2, 5, 2, 16), k("k", 2, 8, 2, 16), v("v", 2, 8, 2, 16),
      out("out", 2, 5, 2, 16), ref("ref", 2, 5, 2, 16);
  fill_random(q, 1);
  fill_random(k, 2);
  fill_random(v, 3);
  fill_nan(out);
  KokkosAttn::sdpa(exec, q, k, v, out);
  exec.fence();
  reference_out(q, k, v, ref);
  CHECK(max_diff4(out, ref) <= 1e-12);
}

TEST_CASE("semantics/errors: sdpa names bad ranks and invalid problems") {
  const Kokkos::DefaultHostExecutionSpace exec;
  Kokkos::View<float**, Kokkos::HostSpace> flat("flat", 4, 8);
  View4<float> q("q", 1, 4, 2, 8), out("out", 1, 4, 2, 8);
  try {
    KokkosAttn::sdpa(exec, flat, q, q, out);
    FAIL("a rank-2 q must throw");
  } catch (const InvalidArgument& e) {
    CHECK(contains(e.what(), "q: expected a rank 4 View"));
    CHECK(contains(e.what(), "got rank 2"));
  }
  // Rank 3 without cu_seqlens: validation rejects it, naming q.
  Kokkos::View<float***, Kokkos::HostSpace> q3("q3", 4, 2, 8);
  CHECK_THROWS_AS(KokkosAttn::sdpa(exec, q3, q, q, out), InvalidArgument);
}

TEST_CASE("semantics/dropout: sdpa forcing naive with dropout throws Unsupported, out untouched") {
  const Kokkos::DefaultHostExecutionSpace exec;
  View4<float> q("q", 1, 4, 2, 8), k("k", 1, 4, 2, 8), v("v", 1, 4, 2, 8), out("out", 1, 4, 2, 8);
  fill_random(q, 1);
  fill_random(k, 2);
  fill_random(v, 3);
  fill_nan(out);
  Options o;
  o.backend = Backend::naive;
  o.dropout_p = 0.2;
  try {
    KokkosAttn::sdpa(exec, q, k, v, out, o);
    FAIL("forced naive with dropout must throw");
  } catch (const Unsupported& e) {
    CHECK(contains(e.what(), "naive"));
    CHECK(contains(e.what(), "dropout"));
  }
  CHECK(all_nan4(out));
}

TEST_CASE("kokkos/sdpa_backward: auto serves the backward (naive refuses it) and forced naive "
          "throws") {
  const Kokkos::DefaultHostExecutionSpace exec;
  const int B = 1, T = 5, S = 6, N = 2, H = 8;
  View4<double> q("q", B, T, N, H), k("k", B, S, N, H), v("v", B, S, N, H), out("out", B, T, N, H),
      dout("dout", B, T, N, H), dq("dq", B, T, N, H), dk("dk", B, S, N, H), dv("dv", B, S, N, H);
  View4<double> rq("rq", B, T, N, H), rk("rk", B, S, N, H), rv("rv", B, S, N, H);
  fill_random(q, 1);
  fill_random(k, 2);
  fill_random(v, 3);
  fill_random(dout, 4);
  KokkosAttn::sdpa(exec, q, k, v, out);
  fill_nan(dq);
  fill_nan(dk);
  fill_nan(dv);
  KokkosAttn::sdpa_backward(exec, q, k, v, out, dout, dq, dk, dv);
  exec.fence();
  BackwardProblem p;
  p.forward.q = KokkosAttn::as_tensor(q);
  p.forward.k = KokkosAttn::as_tensor(k);
  p.forward.v = KokkosAttn::as_tensor(v);
  p.forward.out = KokkosAttn::as_tensor(out);
  p.dout = KokkosAttn::as_tensor(dout);
  p.dq = KokkosAttn::as_tensor(rq);
  p.dk = KokkosAttn::as_tensor(rk);
  p.dv = KokkosAttn::as_tensor(rv);
  reference::backward(p, validate(p));
  // Same backend (reference) on the same f64 data: identical up to summation order.
  CHECK(max_diff4(dq, rq) <= 1e-12);
  CHECK(max_diff4(dk, rk) <= 1e-12);
  CHECK(max_diff4(dv, rv) <= 1e-12);

  Options forced;
  forced.backend = Backend::naive;
  fill_nan(dq);
  try {
    KokkosAttn::sdpa_backward(exec, q, k, v, out, dout, dq, dk, dv, forced);
    FAIL("forced naive backward must throw");
  } catch (const Unsupported& e) {
    CHECK(contains(e.what(), "naive: backward is not implemented"));
  }
  CHECK(all_nan4(dq));
}

TEST_CASE("semantics/packed_varlen: sdpa on rank-3 packed Views (naive refuses, auto serves)") {
  const Kokkos::DefaultHostExecutionSpace exec;
  const int N = 2, H = 8;
  const std::int32_t offsets_q[] = {0, 3, 8}, offsets_k[] = {0, 4, 6};
  Kokkos::View<std::int32_t*, Kokkos::HostSpace> cu_q("cu_q", 3), cu_k("cu_k", 3);
  for (int i = 0; i < 3; ++i)
    cu_q(i) = offsets_q[i], cu_k(i) = offsets_k[i];
  using View3 = Kokkos::View<double***, Kokkos::HostSpace>;
  View3 q("q", 8, N, H), k("k", 6, N, H), v("v", 6, N, H), out("out", 8, N, H), ref("ref", 8, N, H);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> dist;
  for (View3 t : {q, k, v})
    for (std::size_t i = 0; i < t.size(); ++i)
      t.data()[i] = dist(rng);
  Kokkos::deep_copy(out, std::numeric_limits<double>::quiet_NaN());
  Extras e;
  e.cu_seqlens_q = KokkosAttn::as_tensor(cu_q);
  e.cu_seqlens_k = KokkosAttn::as_tensor(cu_k);
  Options o;
  o.causal = true;
  KokkosAttn::sdpa(exec, q, k, v, out, o, e);
  exec.fence();
  ForwardProblem p;
  p.q = KokkosAttn::as_tensor(q);
  p.k = KokkosAttn::as_tensor(k);
  p.v = KokkosAttn::as_tensor(v);
  p.out = KokkosAttn::as_tensor(ref);
  p.options = o;
  p.extras = e;
  reference::forward(p, validate(p));
  double m = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double d = std::abs(out.data()[i] - ref.data()[i]);
    m = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(m, d);
    if (std::isinf(m))
      break;
  }
  CHECK(m <= 1e-12); // f64 on both sides: summation order only
  o.backend = Backend::naive;
  try {
    KokkosAttn::sdpa(exec, q, k, v, out, o, e);
    FAIL("naive must refuse packed varlen");
  } catch (const Unsupported& err) {
    CHECK(contains(err.what(), "naive: packed varlen"));
  }
}
