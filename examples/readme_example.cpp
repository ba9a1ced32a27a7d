// The README's example, as a program: bf16 Views on the default execution space (a GPU when
// Kokkos has one), causal attention, checked against the reference backend on the host. It runs
// the Views as the README writes them (LayoutRight) and in the default layout of the space
// (LayoutLeft on GPUs, reached through layout copies), and prints what ran for each.
//
//   readme_example [B T N H]      (default 2 1024 8 64; exits 1 when a result is wrong)
#include <KokkosAttn.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace {

using bf16 = Kokkos::Experimental::bhalf_t;

template <class View>
void fill(const View& v, unsigned seed) {
  auto h = Kokkos::create_mirror_view(v);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  for (std::size_t a = 0; a < h.extent(0); ++a)
    for (std::size_t b = 0; b < h.extent(1); ++b)
      for (std::size_t c = 0; c < h.extent(2); ++c)
        for (std::size_t d = 0; d < h.extent(3); ++d)
          h(a, b, c, d) = static_cast<bf16>(dist(rng));
  Kokkos::deep_copy(v, h);
}

// Runs the README's call on Views of `Layout`; compares with the reference on host copies.
template <class Layout>
bool run(const char* name, int B, int T, int N, int H) {
  const int S = T, K = N;
  // ---- the README's example ----------------------------------------------------------------
  using View4 = Kokkos::View<bf16****, Layout>; // [B, T, N, H]
  View4 q("q", B, T, N, H), k("k", B, S, K, H), v("v", B, S, K, H), out("out", B, T, N, H);
  fill(q, 1), fill(k, 2), fill(v, 3);
  KokkosAttn::Options opt;
  opt.causal = true;
  KokkosAttn::sdpa(Kokkos::DefaultExecutionSpace(), q, k, v, out, opt);
  // --------------------------------------------------------------------------------------------
  const std::string how = KokkosAttn::explain(Kokkos::DefaultExecutionSpace(), q, k, v, out, opt);
  std::printf("%s: %s\n", name, how.substr(0, how.find('\n')).c_str());

  const auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q);
  const auto hk = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), k);
  const auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  const auto ref = Kokkos::create_mirror(Kokkos::HostSpace(), got); // always a new allocation
  KokkosAttn::Options ro = opt;
  ro.backend = KokkosAttn::Backend::reference;
  KokkosAttn::sdpa(Kokkos::DefaultHostExecutionSpace(), hq, hk, hv, ref, ro);
  Kokkos::DefaultHostExecutionSpace().fence();
  // bf16 outputs: 2 rounding errors of 2^-8 relative, plus P rounded to bf16 before P.V
  // (tests/gpu/test_cuda_case.hpp argues the rule); |v| <= ~5 for these normal inputs.
  double err = 0;
  for (std::size_t a = 0; a < got.extent(0); ++a)
    for (std::size_t b = 0; b < got.extent(1); ++b)
      for (std::size_t c = 0; c < got.extent(2); ++c)
        for (std::size_t d = 0; d < got.extent(3); ++d) {
          const double e =
              std::abs(double(float(got(a, b, c, d))) - double(float(ref(a, b, c, d))));
          err = std::isnan(e) ? INFINITY : std::max(err, e);
        }
  const double tol = 2 * 0x1p-8 * 5 + 2 * 0x1p-8 * 5;
  std::printf("%s: max |out - reference| = %.3g (tolerance %.3g)\n", name, err, tol);
  return err <= tol;
}

} // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const auto arg = [&](int i, int d) { return argc > i ? std::atoi(argv[i]) : d; };
  const int B = arg(1, 2), T = arg(2, 1024), N = arg(3, 8), H = arg(4, 64);
  std::printf("readme_example: B=%d T=S=%d N=%d H=%d bf16 causal on %s\n", B, T, N, H,
              Kokkos::DefaultExecutionSpace::name());
  bool ok = run<Kokkos::LayoutRight>("LayoutRight", B, T, N, H);
  ok = run<Kokkos::DefaultExecutionSpace::array_layout>("default layout", B, T, N, H) && ok;
  std::printf("readme_example: %s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
