// The smallest complete use of kokkos-attention: Views in, KokkosAttn::sdpa, read one value.
#include <KokkosAttn.hpp>

#include <cmath>
#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  using Exec = Kokkos::DefaultExecutionSpace;
  using View = Kokkos::View<float****, Exec::memory_space>; // [batch, tokens, heads, head_dim]
  const int B = 1, T = 4, N = 2, H = 8;
  View q("q", B, T, N, H), k("k", B, T, N, H), v("v", B, T, N, H), out("out", B, T, N, H);
  Kokkos::deep_copy(q, 0.5f); // equal queries and keys: every visible key gets the same weight
  Kokkos::deep_copy(k, 0.25f);
  Kokkos::parallel_for(
      "fill_v", Kokkos::MDRangePolicy<Exec, Kokkos::Rank<4>>({0, 0, 0, 0}, {B, T, N, H}),
      KOKKOS_LAMBDA(int b, int j, int n, int c) { v(b, j, n, c) = static_cast<float>(j); });

  KokkosAttn::Options options;
  options.causal = true; // query i sees keys 0..i, so out[.., i, ..] = mean(0..i) = i / 2
  KokkosAttn::sdpa(Exec(), q, k, v, out, options);

  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  const float got = host(0, 3, 0, 0);
  std::printf("out[0, 3, 0, 0] = %.4f (expected 1.5000)\n", static_cast<double>(got));
  return std::abs(got - 1.5f) < 1e-5f ? 0 : 1;
}
