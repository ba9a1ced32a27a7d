// The consumer mainloop of one tile (one warpgroup, 64 query rows): S = Q K^T and O += P V on
// wgmma with the online softmax in registers. Per key block it: issue S(it), rescale O, issue
// P V(it - 1), pass the GEMM turn, softmax(it) while P V(it - 1) runs, then pack P(it)
// (Cfg::kLateRescale: O is rescaled after P V(it - 1) completes, before the packing).
#pragma once

#include <cstdint>

#include "fwd_config.cuh"
#include "fwd_epilogue.cuh"
#include "pipeline.cuh"
#include "ptx.cuh"
#include "scheduler.cuh"
#include "seq_mask.cuh"
#include "softmax.cuh"
#include "wgmma_ops.cuh"

namespace kattn::cuda_kernels::sm90 {

// Padded batches: V rows at or past k_len hold caller padding (maybe NaN, and 0 * NaN = NaN),
// so consumer warpgroup 0 zeroes them in the stage before any warpgroup runs P V.
template <class Cfg>
__device__ __forceinline__ void zero_padding_rows(std::uint32_t v_base, int first_row, int wg,
                                                  int tid) {
  if (wg == 0) {
    const int first = max(first_row, 0);
    const int chunks = (Cfg::kBlockN - first) * 8; // 16-byte chunks per 128-byte row
    for (int c = 0; c < Cfg::kColBlocks; ++c) {
      const std::uint32_t base = v_base + c * Cfg::kKVColBlockBytes + first * 128;
      for (int i = tid; i < chunks; i += 128) {
        asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(base + 16 * i), "r"(0)
                     : "memory");
      }
    }
    fence_proxy_async();
  }
  named_bar_sync(1, Cfg::kConsumerThreads);
}

// Named barrier 2 + w: "consumer warpgroup w may issue its GEMMs"; turns go round robin.
template <class Cfg>
__device__ __forceinline__ void turn_wait(int wg) {
  if constexpr (Cfg::kPingPong) {
    named_bar_sync(2 + wg, 256);
  }
}
template <class Cfg>
__device__ __forceinline__ void turn_pass(int wg) {
  if constexpr (Cfg::kPingPong) {
    named_bar_arrive(2 + (wg + 1) % Cfg::kConsumerWGs, 256);
  }
}

// Cfg::kCarryTurn: the last warpgroup's final pass of the kernel has no tile to start;
// warpgroup 0 takes it so that no named barrier is left half-arrived at exit.
template <class Cfg>
__device__ __forceinline__ void turn_drain(int wg, int q_count) {
  if constexpr (Cfg::kCarryTurn) {
    if (wg == 0 && q_count > 0) {
      named_bar_sync(2, 256);
    }
  }
}

template <class Cfg>
__device__ __forceinline__ void consume_tile(const FwdArgs& a, std::uint32_t smem,
                                             const TileWork& w, int wg, int& it_base,
                                             int& q_count) {
  constexpr int BN = Cfg::kBlockN;
  constexpr int D = Cfg::kHeadDim;
  constexpr int kSRegs = BN / 2;
  constexpr int kORegs = D / 2;
  constexpr int kLastWG = Cfg::kConsumerWGs - 1;
  using MmaS = WgmmaSS<BN, Cfg::kBf16>;
  using MmaO = WgmmaRS<D, Cfg::kBf16>;

  const int tid = static_cast<int>(threadIdx.x) % 128;
  const int lane = tid % 32;
  const int wg_row0 = w.t.m_block * Cfg::kBlockM + wg * 64; // first query row of this warpgroup
  const int row0 = wg_row0 + (tid / 32) * 16 + lane / 4;
  const int row1 = row0 + 8;
  const KeyRange keys0 = row_keys(a.p, w.s, row0);
  const KeyRange keys1 = row_keys(a.p, w.s, row1);
  const Ring<Cfg> ring{smem + Cfg::kOffBar};
  const int qs = Ring<Cfg>::q_stage(q_count);
  const std::uint32_t q_base = smem + Cfg::kOffQ + qs * Cfg::kQBytes + wg * 64 * 128;
  const float log2_mul = a.softmax_log2;
  const int n_iter = w.n_iter();

  float o[kORegs];
#pragma unroll
  for (int i = 0; i < kORegs; ++i) {
    o[i] = 0.f;
  }
  OnlineSoftmax sm;
  float sc[kSRegs];
  std::uint32_t pa[BN / 16][4];
  float corr[2] = {1.f, 1.f};

  const auto issue_s = [&](int i) {
    const std::uint32_t k_base = smem + Cfg::kOffK + Ring<Cfg>::stage(it_base + i) * Cfg::kKVBytes;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const std::uint32_t off = (kk % 4) * 32; // 16 elements inside the 128-byte row
      const std::uint64_t dq = sw128_desc(q_base + (kk / 4) * Cfg::kQColBlockBytes + off, 16, 1024);
      const std::uint64_t dk =
          sw128_desc(k_base + (kk / 4) * Cfg::kKVColBlockBytes + off, 16, 1024);
      if (kk == 0) {
        MmaS::run_zero(sc, dq, dk);
      } else {
        MmaS::run(sc, dq, dk, 1);
      }
    }
    wgmma_commit();
  };
  // Waits for V of block i (and zeroes padding rows). Called outside the GEMM turn: the
  // zeroing synchronises all consumer warpgroups.
  const auto wait_v = [&](int i) {
    const int st = Ring<Cfg>::stage(it_base + i);
    mbar_wait(ring.v_full(st), Ring<Cfg>::parity(it_base + i));
    const int n0 = (w.nb_begin + i) * BN;
    if (a.p.seqlens_k != nullptr && n0 + BN > w.s.k_len) {
      zero_padding_rows<Cfg>(smem + Cfg::kOffV + st * Cfg::kKVBytes, w.s.k_len - n0, wg, tid);
    }
  };
  const auto issue_pv = [&](int i) {
    const std::uint32_t v_base = smem + Cfg::kOffV + Ring<Cfg>::stage(it_base + i) * Cfg::kKVBytes;
    reg_fence(o);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      MmaO::run(o, pa[kk], sw128_desc(v_base + kk * 2048, Cfg::kKVColBlockBytes, 1024), 1);
    }
    wgmma_commit();
  };
  const auto rescale_o = [&]() {
#pragma unroll
    for (int j = 0; j < kORegs / 4; ++j) {
      o[4 * j] *= corr[0];
      o[4 * j + 1] *= corr[0];
      o[4 * j + 2] *= corr[1];
      o[4 * j + 3] *= corr[1];
    }
  };
  // Scores of block i -> unnormalised probabilities in sc, and corr for the older rows of O.
  const auto softmax = [&](int i) {
    if (a.softcap_mul > 0.f) {
      apply_softcap(sc, a.score_scale, a.softcap_mul);
    }
    const int n0 = (w.nb_begin + i) * BN;
    if (block_needs_mask(a.p, w.s, n0, BN, wg_row0, wg_row0 + 63)) {
      apply_mask(sc, n0 + 2 * (lane % 4), keys0, keys1);
    }
    sm.step(sc, log2_mul, corr);
  };
  // Probabilities -> wgmma A fragments; only once the previous P V completed (wgmma reads its
  // A registers asynchronously).
  const auto pack_p = [&]() {
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      pa[kk][0] = pack2(sc[8 * kk + 0], sc[8 * kk + 1], Cfg::kBf16);
      pa[kk][1] = pack2(sc[8 * kk + 2], sc[8 * kk + 3], Cfg::kBf16);
      pa[kk][2] = pack2(sc[8 * kk + 4], sc[8 * kk + 5], Cfg::kBf16);
      pa[kk][3] = pack2(sc[8 * kk + 6], sc[8 * kk + 7], Cfg::kBf16);
      reg_fence(pa[kk]); // pin the conversions here, not between later wgmma issues
    }
  };
  const auto release = [&](std::uint32_t bar) {
    __syncwarp();
    if (lane == 0) {
      mbar_arrive(bar);
    }
  };

  if (n_iter > 0) {
    mbar_wait(ring.q_full(qs), Ring<Cfg>::q_parity(q_count));
    if (Cfg::kPingPong && wg == kLastWG && (!Cfg::kCarryTurn || q_count == 0)) {
      turn_pass<Cfg>(wg); // warpgroup 0 issues first
    }
    mbar_wait(ring.k_full(Ring<Cfg>::stage(it_base)), Ring<Cfg>::parity(it_base));
    turn_wait<Cfg>(wg);
    issue_s(0);
    if (Cfg::kCarryTurn || !(wg == kLastWG && n_iter == 1)) {
      turn_pass<Cfg>(wg);
    }
    wgmma_wait<0>();
    reg_fence(sc);
    release(ring.k_empty(Ring<Cfg>::stage(it_base)));
    if (n_iter == 1) {
      release(ring.q_empty(qs));
    }
    softmax(0);
    pack_p();
    for (int i = 1; i < n_iter; ++i) {
      const int st = Ring<Cfg>::stage(it_base + i);
      mbar_wait(ring.k_full(st), Ring<Cfg>::parity(it_base + i));
      wait_v(i - 1);
      turn_wait<Cfg>(wg);
      issue_s(i);
      if constexpr (!Cfg::kLateRescale) {
        rescale_o(); // by the factor of block i - 1, while S(i) runs
      }
      issue_pv(i - 1);
      if (Cfg::kCarryTurn || !(wg == kLastWG && i == n_iter - 1)) {
        turn_pass<Cfg>(wg);
      }
      wgmma_wait<1>();
      reg_fence(sc);
      release(ring.k_empty(st));
      if (i == n_iter - 1) {
        release(ring.q_empty(qs));
      }
      softmax(i);
      wgmma_wait<0>();
      reg_fence(o);
      release(ring.v_empty(Ring<Cfg>::stage(it_base + i - 1)));
      if constexpr (Cfg::kLateRescale) {
        rescale_o(); // by block i's factor, now that P V(i - 1) has landed in O
      }
      pack_p();
    }
    wait_v(n_iter - 1);
    if constexpr (!Cfg::kLateRescale) {
      rescale_o();
    }
    issue_pv(n_iter - 1);
    wgmma_wait<0>();
    reg_fence(o);
    release(ring.v_empty(Ring<Cfg>::stage(it_base + n_iter - 1)));
    it_base += n_iter;
    ++q_count;
  }

  float inv[2];
  float lse[2];
  sm.finish(log2_mul, inv, lse);
  store_output<Cfg>(a, w.t, w.s, o, inv, lse, row0, row1, lane);
}

} // namespace kattn::cuda_kernels::sm90
