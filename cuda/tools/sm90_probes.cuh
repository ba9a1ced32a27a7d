// The A/B tool's probes of the sm90 forward kernel (cuda/sm90/probe.cuh); the library's kernels
// never record and always store.
//
// TileTraceProbe: per-tile timestamps for studying the persistent schedule. Consumer warpgroup
// w of CTA c writes, for its tile of round r, kTraceWords words at
// FwdArgs::probe[((c * kTraceRounds + r) * W + w) * kTraceWords]: the global timer (ns) at tile
// start, when its Q had arrived, when its last P V had landed and after its output stores were
// issued, then the tile's key blocks and (batch, head, m_block). With Cfg::kSplitLastPv the
// rows are stored inside the last P V, before its "landed" stamp.
//
// NoStoreProbe: the epilogue computes its rows but skips the global stores (outputs wrong on
// purpose), to measure what the tile boundary's stores cost.
#pragma once

#include <cstdint>

#include "sm90/probe.cuh"

namespace kattn::cuda_kernels::sm90 {

inline constexpr int kTraceRounds = 256;
inline constexpr int kTraceWords = 6;

struct TileTraceProbe {
  static constexpr bool kStoreOutput = true;
  std::uint64_t* slot = nullptr; // nullptr: this thread does not record

  __device__ __forceinline__ TileTraceProbe(const FwdArgs& a, int round, int wg, int wgs) {
    if (a.probe != nullptr && threadIdx.x % 128 == 0 && round < kTraceRounds) {
      const int c = static_cast<int>(blockIdx.x);
      slot = static_cast<std::uint64_t*>(a.probe) +
             ((static_cast<std::int64_t>(c) * kTraceRounds + round) * wgs + wg) * kTraceWords;
    }
  }
  __device__ __forceinline__ void mark(ProbeEvent e) const {
    if (slot != nullptr) {
      std::uint64_t t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      slot[e] = t;
    }
  }
  template <class TileT>
  __device__ __forceinline__ void tile(int n_iter, const TileT& t) const {
    if (slot != nullptr) {
      slot[4] = static_cast<std::uint64_t>(n_iter);
      slot[5] = (static_cast<std::uint64_t>(t.batch) << 40) |
                (static_cast<std::uint64_t>(t.head) << 20) | static_cast<std::uint64_t>(t.m_block);
    }
  }
};

struct NoStoreProbe : NoProbe {
  static constexpr bool kStoreOutput = false;
  using NoProbe::NoProbe;
};

} // namespace kattn::cuda_kernels::sm90
