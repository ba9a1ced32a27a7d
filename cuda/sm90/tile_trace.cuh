// Per-tile timestamps for studying the persistent schedule (Cfg::kTrace builds, made only by the
// A/B tool; the library's kernels never record). Consumer warpgroup w of CTA c writes, for its
// tile of round r, kTraceWords words at trace[((c * kTraceRounds + r) * W + w) * kTraceWords]:
// the global timer (ns) at tile start, when its Q had arrived, when its last P V had landed and
// after its output stores were issued, then the tile's key blocks and (batch, head, m_block).
// With Cfg::kSplitLastPv the rows are stored inside the last P V, before its "landed" stamp.
#pragma once

#include <cstdint>

#include "fwd_config.cuh"

namespace kattn::cuda_kernels::sm90 {

inline constexpr int kTraceRounds = 256;
inline constexpr int kTraceWords = 6;
enum TraceEvent : int { kTraceTileStart = 0, kTraceQArrived, kTraceMainloopDone, kTraceStored };

template <class Cfg>
struct TileTrace {
  std::uint64_t* slot = nullptr; // nullptr: this thread does not record

  __device__ __forceinline__ TileTrace(const FwdArgs& a, int round, int wg) {
    if constexpr (Cfg::kTrace) {
      if (a.trace != nullptr && threadIdx.x % 128 == 0 && round < kTraceRounds) {
        const int c = static_cast<int>(blockIdx.x);
        slot = a.trace +
               ((static_cast<std::int64_t>(c) * kTraceRounds + round) * Cfg::kConsumerWGs + wg) *
                   kTraceWords;
      }
    }
  }
  __device__ __forceinline__ void mark(TraceEvent e) const {
    if constexpr (Cfg::kTrace) {
      if (slot != nullptr) {
        std::uint64_t t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        slot[e] = t;
      }
    }
  }
  template <class TileT>
  __device__ __forceinline__ void tile(int n_iter, const TileT& t) const {
    if constexpr (Cfg::kTrace) {
      if (slot != nullptr) {
        slot[4] = static_cast<std::uint64_t>(n_iter);
        slot[5] = (static_cast<std::uint64_t>(t.batch) << 40) |
                  (static_cast<std::uint64_t>(t.head) << 20) |
                  static_cast<std::uint64_t>(t.m_block);
      }
    }
  }
};

} // namespace kattn::cuda_kernels::sm90
