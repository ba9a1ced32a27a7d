#include "kokkosattn/preference.hpp"

#include <algorithm>

namespace kattn {

AutoOrder auto_order(const Dims& d, bool backward) {
  AutoOrder a;
  // Small forwards: our cuda kernels first. H200, 2026-11-30 (benchmarks/results/
  // h200-2026-11-30-ours-interleaved.json and the codelab demo's sweeps): up to ~2^30 FLOP the
  // forward is bound by per-call cost, where cuda's is lower (7.8 vs 9.4 us back to back; 13.8 vs
  // 14.6 us GPU time at the codelab shape); above it cudnn stays first, and where the cuda
  // kernels measured faster (on sm90: head dim 256 from 2048-4096 keys, head dims 64/128 from
  // 8192, head dim 128 causal from 4096; cuda_backend.cpp) the cuda backend claims the problem
  // through BackendImpl::leads(). cuda has no backward, so the backward order is
  // unchanged.
  const double flops =
      2.0 * double(d.B) * double(d.N) * double(d.T) * double(d.S) * double(d.H + d.Hv);
  if (!backward && flops <= small_problem_flops) {
    auto& o = a.order;
    const auto cudnn = std::find(o.begin(), o.end(), Backend::cudnn);
    const auto cuda = std::find(o.begin(), o.end(), Backend::cuda);
    if (cudnn < cuda) {
      std::rotate(cudnn, cuda, cuda + 1);
      a.rule = "cuda before cudnn: a small forward (<= 2^30 FLOP) is bound by per-call cost, "
               "lower in cuda";
    }
  }
  return a;
}

} // namespace kattn
