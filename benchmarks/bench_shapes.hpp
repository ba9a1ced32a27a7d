// The problem issue 3 measures on the CPU: fp32, B=4, N=K=8, H=64, T=S, causal or not, plus the
// inputs every benchmark and every peak-RSS child shares.
#pragma once

#include <KokkosAttn.hpp>

namespace kattn_bench {

using Exec = Kokkos::DefaultHostExecutionSpace;
using View4 = Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::HostSpace>;

constexpr int B = 4, N = 8, H = 64;

// Forward FLOPs as the results schema counts them: 4·B·N·T·S·H, halved for causal.
inline double forward_flops(int T, int S, bool causal) {
  return 4.0 * B * N * double(T) * double(S) * H * (causal ? 0.5 : 1.0);
}

// q, k, v (random N(0, 1)) and out for one T = S.
struct Inputs {
  View4 q, k, v, out;
  explicit Inputs(int T);
  double io_bytes() const; // q, k, v read once, out written once
};

// Runs one forward pass on `backend` and waits for it.
void run_forward(const Inputs& in, kattn::Backend backend, bool causal);

} // namespace kattn_bench
