// The hooks through which a tool observes or alters the forward kernel: the kernel's second
// template parameter (fwd_kernel<Cfg, Probe>). The library's kernels take NoProbe, whose hooks
// compile to nothing; the A/B tool defines the others (cuda/tools/sm90_probes.cuh: per-tile
// timestamps, an epilogue without its global stores).
//
// A probe type has kStoreOutput (false: the epilogue computes its rows but skips the global
// stores of O and LSE, outputs wrong on purpose) and is constructed per tile by each consumer
// warpgroup, Probe(args, round, warpgroup, warpgroups), with mark(event) and tile(key blocks,
// tile) called at the points below.
#pragma once

#include "fwd_config.cuh"

namespace kattn::cuda_kernels::sm90 {

enum ProbeEvent : int { kProbeTileStart = 0, kProbeQArrived, kProbeMainloopDone, kProbeStored };

struct NoProbe {
  static constexpr bool kStoreOutput = true;
  __device__ __forceinline__ NoProbe(const FwdArgs&, int, int, int) {}
  __device__ __forceinline__ void mark(ProbeEvent) const {}
  template <class TileT>
  __device__ __forceinline__ void tile(int, const TileT&) const {}
};

} // namespace kattn::cuda_kernels::sm90
