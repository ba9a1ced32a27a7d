// One consumer warpgroup of the sm90 backward: 64 keys of the CTA, their dK and dV accumulators
// in registers across every step. Per step (a query block of one query head), with P recomputed
// from the forward's LSE (common/bwd_scores.cuh):
//   S^T = K Q^T, dP^T = V dO^T          wgmma, both operands from shared memory (64 x 64)
//   P^T, dS^T                           in registers (masking, softcap)
//   dV += P^T dO                        wgmma with the A operand from registers
//   dS^T -> shared memory, dQ = dS K    wgmma, both operands MN-major (at head dim 128 over
//                                       this warpgroup's keys first, then the other's)
//   dK += dS^T Q                        A from registers, running while dQ is staged in shared
//                                       memory and added into dq_accum by bulk or TMA
//                                       reductions (one per warp; bwd_config.cuh: which keys and
//                                       columns each warpgroup's dQ covers, and which kind)
// The warpgroup also stages the next step's LSE * log2 e and D rows in shared memory.
#pragma once

#include <cstdint>

#include "bwd_config.cuh"
#include "bwd_dq_reduce.cuh"
#include "bwd_trace.cuh"
#include "bwd_work.cuh"
#include "common/bwd_scores.cuh"
#include "ptx.cuh"
#include "wgmma_ops.cuh"

namespace kattn::cuda_kernels::sm90 {

// Zeroes rows [first, rows) of a tile stored as 64-column blocks `block_bytes` apart, shared by
// `threads` threads; the caller synchronises them afterwards.
template <class Cfg>
__device__ __forceinline__ void zero_tile_rows(std::uint32_t base, int block_bytes, int first,
                                               int rows, int thread, int threads) {
  const int chunks = (rows - max(first, 0)) * 8; // 16-byte chunks of 128-byte rows
  for (int c = 0; c < Cfg::kColBlocks; ++c) {
    const std::uint32_t b = base + c * block_bytes + max(first, 0) * 128;
    for (int i = thread; i < chunks; i += threads) {
      asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(b + 16 * i), "r"(0)
                   : "memory");
    }
  }
  fence_proxy_async();
}

template <class Cfg>
struct BwdConsumer {
  static constexpr int D = Cfg::kHeadDim;
  static constexpr int BM = Cfg::kBlockM;
  static constexpr int kAccRegs = D / 2;  // m64nD accumulators: dK, dV
  static constexpr int kSRegs = BM / 2;   // m64n64: S^T, dP^T, dQ
  static constexpr int kSteps = BM / 16;  // k-steps of the register-A products
  static constexpr int kRowVals = BM / 4; // query columns of a thread's scores
  using Step = BwdStep<Cfg>;
  using MmaS = WgmmaSS<BM, Cfg::kBf16, false>;
  using MmaKV = WgmmaRS<D, Cfg::kBf16, true>;
  using MmaDq = WgmmaSS<64, Cfg::kBf16, true>;

  const BwdArgs& a;
  const std::uint32_t smem;
  const BwdWork<Cfg>& w;
  const int wg; // consumer warpgroup: keys [64 wg, 64 wg + 64) of the CTA
  float (&dk)[kAccRegs];
  float (&dv)[kAccRegs];
  const int tid = static_cast<int>(threadIdx.x) % 128;
  const int lane = tid % 32;
  const int r0 = 16 * (tid / 32) + lane / 4; // accumulator rows r0 and r0 + 8
  const int kw0 = w.n0 + 64 * wg;
  const BwdRing<Cfg> ring{smem + Cfg::kOffBar};

  // A phase mark of step s for the timeline (bwd_trace.cuh); no code outside trace builds.
  __device__ __forceinline__ void mark([[maybe_unused]] const Step& s,
                                       [[maybe_unused]] BwdMark m) const {
#ifdef KATTN_SM90_BWD_TRACE
    bwd_trace_mark(a.trace, wg, s.it, m);
#endif
  }

  // acc = A B^T over the head dim: A = this warpgroup's 64 rows of K (or V), B = the stage's Q
  // (or dO); both K-major.
  __device__ __forceinline__ void gemm_rows(float (&acc)[kSRegs], std::uint32_t a_rows,
                                            std::uint32_t b_rows) const {
    const std::uint64_t da0 = sw128_desc(a_rows, 16, 1024), db0 = sw128_desc(b_rows, 16, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const std::uint32_t off = (kk % 4) * 32; // 16 elements inside the 128-byte row
      const std::uint64_t da = desc_advance(da0, (kk / 4) * Cfg::kKVColBlockBytes + off);
      const std::uint64_t db = desc_advance(db0, (kk / 4) * Cfg::kQColBlockBytes + off);
      if (kk == 0) {
        MmaS::run_zero(acc, da, db);
      } else {
        MmaS::run(acc, da, db, 1);
      }
    }
    wgmma_commit();
  }

  // Whether a step's tile needs per-element masking (rows past the sequence, keys past it or
  // outside a row's window): decided once per step, so that the common tile's score loop is
  // straight-line code (H200 ncu, 2026-12-03: a per-element test left ~290 branches in the step).
  __device__ __forceinline__ bool tile_masked(int m0) const {
    return m0 + BM > w.seq.q_len || w.rule.tile_needs_mask(m0, m0 + BM - 1, kw0, 64);
  }

  // A row buffer's values at the query columns of this thread's scores (`which` 0: LSE * log2 e,
  // 1: D): column group j's queries 8 j + 2 (lane % 4) and + 1 in v[2 j] and v[2 j + 1]. Loaded
  // before the wgmma wait that precedes their use: loaded beside each score, they waited on shared
  // memory behind the products' operand reads (H200 ncu, 2026-12-03).
  __device__ __forceinline__ void row_pair(std::uint32_t rows, int which, int j, float* v) const {
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n"
                 : "=f"(v[0]), "=f"(v[1])
                 : "r"(rows + 4 * (which * BM + 8 * j + 2 * (lane % 4))));
  }
  __device__ __forceinline__ void load_rows(std::uint32_t rows, int which,
                                            float (&v)[kRowVals]) const {
#pragma unroll
    for (int j = 0; j < BM / 8; ++j) {
      row_pair(rows, which, j, &v[2 * j]);
    }
  }

  // Calls f(index, visible, column) for each score register; column indexes load_rows' values.
  // Element e of column group j: key r0 + 8 (e / 2), query 8 j + 2 (lane % 4) + e % 2 of the
  // block. Visibility (kMasked) compares the key with its query's key range: selects, no
  // branches.
  template <bool kMasked, class F>
  __device__ __forceinline__ void each_score(int m0, F&& f) const {
#pragma unroll
    for (int j = 0; j < BM / 8; ++j) {
      const int c = 8 * j + 2 * (lane % 4);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        bool visible = true;
        if constexpr (kMasked) {
          const int i = m0 + c + e % 2, key = kw0 + r0 + 8 * (e / 2);
          const IndexRange<int> keys = w.rule.row_keys(i);
          visible = i < w.seq.q_len && key >= keys.lo && key < keys.hi;
        }
        f(4 * j + e, visible, 2 * j + e % 2);
      }
    }
  }

  // Accumulator registers -> wgmma A fragments (k-step kk: columns [16 kk, 16 kk + 16)).
  __device__ __forceinline__ void pack(const float (&acc)[kSRegs],
                                       std::uint32_t (&f)[kSteps][4]) const {
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        f[kk][i] = pack2(acc[8 * kk + 2 * i], acc[8 * kk + 2 * i + 1], Cfg::kBf16);
      }
    }
  }

  // Element i of the packed fragments (pack's layout: even elements in the low halves), back in
  // fp32.
  static __device__ __forceinline__ float unpacked(const std::uint32_t (&f)[kSteps][4], int i) {
    const std::uint32_t pair = f[i / 8][(i % 8) / 2];
    if constexpr (Cfg::kBf16) {
      return __uint_as_float(i % 2 ? pair & 0xffff0000u : pair << 16);
    } else {
      float r;
      if (i % 2) {
        asm("{\n.reg .b16 lo, hi;\nmov.b32 {lo, hi}, %1;\ncvt.f32.f16 %0, hi;\n}\n"
            : "=f"(r)
            : "r"(pair));
      } else {
        asm("{\n.reg .b16 lo, hi;\nmov.b32 {lo, hi}, %1;\ncvt.f32.f16 %0, lo;\n}\n"
            : "=f"(r)
            : "r"(pair));
      }
      return r;
    }
  }

  // dS^T fragments -> the dS^T buffer: key row R (of the CTA's 128) holds the block's 64
  // queries in 128 bytes, 16-byte chunks swizzled as TMA's SWIZZLE_128B (chunk ^ R % 8).
  __device__ __forceinline__ void store_ds(const std::uint32_t (&f)[kSteps][4],
                                           std::uint32_t ds) const {
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int row = 64 * wg + r0 + 8 * (i % 2);
        const int chunk = (2 * kk + i / 2) ^ (row % 8);
        asm volatile(
            "st.shared.u32 [%0], %1;\n" ::"r"(ds + row * 128 + chunk * 16 + 4 * (lane % 4)),
            "r"(f[kk][i])
            : "memory");
      }
    }
  }

  // dQ (64 queries x 64 columns) += dS K over the CTA's keys [64 half, 64 half + 64) (kZero: =);
  // A = dS from the key-major dS^T buffer, B = K's rows: both MN-major. At head dim 128 the
  // product over all 128 keys is two such calls, this warpgroup's keys first.
  template <bool kZero>
  __device__ __forceinline__ void gemm_dq(float (&dq)[kSRegs], std::uint32_t ds, int half) const {
    const std::uint32_t a0 = ds + 64 * half * 128;
    const std::uint32_t b0 =
        smem + Cfg::kOffK + (Cfg::kDqSplit ? wg * Cfg::kKVColBlockBytes : 0) + 64 * half * 128;
    const std::uint64_t da0 = sw128_desc(a0, Cfg::kDsBytes, 1024);
    const std::uint64_t db0 = sw128_desc(b0, Cfg::kKVColBlockBytes, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const std::uint64_t da = desc_advance(da0, kk * 2048);
      const std::uint64_t db = desc_advance(db0, kk * 2048);
      if (kZero && kk == 0) {
        MmaDq::run_zero(dq, da, db);
      } else {
        MmaDq::run(dq, da, db, 1);
      }
    }
    wgmma_commit();
  }

  // kDqBulk (head dim 64): dQ -> this warp's staging block in fragment order (16-byte stores, lane
  // l's column group j at 16 (32 j + l): conflict-free), added as a whole (issue_dq_box).
  __device__ __forceinline__ void stage_dq_bulk(const float (&dq)[kSRegs],
                                                std::uint32_t box) const {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(box + 16 * (32 * j + lane)),
                   "f"(dq[4 * j]), "f"(dq[4 * j + 1]), "f"(dq[4 * j + 2]), "f"(dq[4 * j + 3])
                   : "memory");
    }
  }

  // Otherwise (head dim 128): dQ -> this warp's staging box (its 16 rows x 64 fp32 columns; a
  // row is two 128-byte swizzle rows, 16-byte chunks swizzled as TMA's SWIZZLE_128B), added by
  // one TMA tensor reduction (issue_dq_box).
  __device__ __forceinline__ void stage_dq_tensor(const float (&dq)[kSRegs], const Step& s,
                                                  std::uint32_t box) const {
    const int warp = tid / 32;
    // Rows past the sequence get exactly 0, not 0 * K, which is NaN where this sequence's K
    // holds an inf (in the batched layout before 64-row tiles such a box reached the next
    // sequence's rows).
    const int valid_rows = w.seq.q_len - s.m0;
    // Column group j of row r (of the warp's 16) is in swizzle row R = 2 r + j / 4, chunk
    // (2 (j % 4) + (lane % 4) / 2) ^ (R % 8); the 8-byte stores of a half warp (4 rows, R % 8
    // two apart) meet every bank once. Rows r and r + 8 share R % 8: h adds 16 swizzle rows.
    // The per-row check only where the block reaches past the sequence (a uniform branch: the
    // common block's staging has no selects).
    const auto stage = [&]<bool kCheck>() {
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int sr = 2 * (lane / 4) + j / 4;
        const std::uint32_t at0 =
            box + sr * 128 + ((2 * (j % 4) + (lane % 4) / 2) ^ (sr % 8)) * 16 + 8 * (lane % 2);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const bool valid = !kCheck || Cfg::kDqWarpRows * warp + lane / 4 + 8 * h < valid_rows;
          asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(at0 + h * 16 * 128),
                       "f"(valid ? dq[4 * j + 2 * h] : 0.f),
                       "f"(valid ? dq[4 * j + 2 * h + 1] : 0.f)
                       : "memory");
        }
      }
    };
    if (valid_rows >= BM) {
      stage.template operator()<false>();
    } else {
      stage.template operator()<true>();
    }
  }

  __device__ __forceinline__ void stage_dq(const float (&dq)[kSRegs], const Step& s,
                                           std::uint32_t box) const {
    if constexpr (Cfg::kDqBulk) {
      stage_dq_bulk(dq, box);
    } else {
      stage_dq_tensor(dq, s, box);
    }
  }

  // dQ into dq_accum, one reduction per warp with no barrier beyond the warp (a warpgroup-wide
  // one before the reduction stalled the step: H200 ncu, 2026-12-03).
  __device__ __forceinline__ void reduce_dq(const float (&dq)[kSRegs], const Step& s) const {
    const int warp = tid / 32;
    if constexpr (Cfg::kDet) {
      hand_dq(dq, s, warp);
      return;
    }
    const std::uint32_t box = BwdRing<Cfg>::dq_box(smem, wg, 0, warp);
    if (lane == 0) {
      bulk_wait_read<0>(); // this warp's last reduction has read its box
    }
    __syncwarp();
    stage_dq(dq, s, box);
    fence_proxy_async();
    __syncwarp();
    if (lane == 0 && dq_box_has_rows(w, s.m0, warp)) {
      issue_dq_box<Cfg>(a, s.head, acc_row0<Cfg::kDqBulk>(a.p, w.seq, w.b) + s.m0, wg, warp, box);
      bulk_commit();
    }
  }

  // Deterministic mode: dQ staged for the writer (bwd_dq_reduce.cuh) in the step's hand-over
  // buffer, once the writer is done with that buffer's last step. Where both warpgroups' dQ cover
  // the same elements (head dim 64, over their own keys), warpgroup 0 stages its own (once
  // warpgroup 1 has read its last one: barrier 7) and warpgroup 1 the sum, warpgroup 0's first (a
  // fixed order), into the buffer it hands over.
  __device__ __forceinline__ void hand_dq(const float (&dq)[kSRegs], const Step& s,
                                          int warp) const {
    static_assert(Cfg::kDqSplit || Cfg::kDqBulk, "the sum of both halves: fragment order only");
    const int buf = BwdRing<Cfg>::dq_buffer(s.it);
    const std::uint32_t box = BwdRing<Cfg>::dq_box(smem, wg, buf, warp);
    if constexpr (Cfg::kDqSplit) {
      mbar_wait(ring.dq_empty(buf), BwdRing<Cfg>::dq_parity(s.it) ^ 1u);
      stage_dq(dq, s, box);
    } else if (wg == 0) {
      if (s.it > 0) {
        named_bar_sync(7, Cfg::kConsumerThreads); // warpgroup 1 has read the step before's
      }
      stage_dq(dq, s, box);
      named_bar_arrive(6, Cfg::kConsumerThreads);
      return;
    } else {
      mbar_wait(ring.dq_empty(buf), BwdRing<Cfg>::dq_parity(s.it) ^ 1u);
      named_bar_sync(6, Cfg::kConsumerThreads);
      const std::uint32_t other = BwdRing<Cfg>::dq_box(smem, 0, 0, warp);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const std::uint32_t at = 16 * (32 * j + lane);
        float o[4];
        asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                     : "=f"(o[0]), "=f"(o[1]), "=f"(o[2]), "=f"(o[3])
                     : "r"(other + at)
                     : "memory");
        asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(box + at),
                     "f"(o[0] + dq[4 * j]), "f"(o[1] + dq[4 * j + 1]), "f"(o[2] + dq[4 * j + 2]),
                     "f"(o[3] + dq[4 * j + 3])
                     : "memory");
      }
      if (s.it + 1 < w.steps) {
        named_bar_arrive(7, Cfg::kConsumerThreads); // (matched by warpgroup 0's next step)
      }
    }
    if (wg == Cfg::kConsumerWGs - 1 && tid == 0) {
      store_dq_job(ring.dq_job(buf), dq_job_of(a.p, w, s.head, s.m0));
    }
    fence_proxy_async();
    __syncwarp();
    if (lane == 0) {
      mbar_arrive(ring.dq_full(buf));
    }
  }

  // The step's LSE * log2 e and D rows, in this warpgroup's buffer of the step's stage: thread
  // t < 64 brings row t's LSE, the others row t - 64's D, from global memory (row_raw) and stores
  // it (store_row) before a barrier of the warpgroup.
  __device__ __forceinline__ std::uint32_t rows_of(const Step& s) const {
    return smem + Cfg::kOffRows + (wg * Cfg::kStages + BwdRing<Cfg>::stage(s.it)) * Cfg::kRowBytes;
  }
  __device__ __forceinline__ float row_raw(const Step& s) const {
    const FlashBwdParams& p = a.p;
    const int i = s.m0 + tid % 64;
    if (i >= w.seq.q_len) {
      return tid < 64 ? -INFINITY : 0.f; // stored as 0
    }
    // The sequence's first token read afresh (packed varlen: cu_seqlens_q, cached): kept from
    // the kernel's start, it was the one value ptxas spilled at head dim 128 (with the LSE row
    // loaded before the products, below).
    const SeqSpan<int> seq = seq_span(p.fwd, w.b);
    if (tid < 64) {
      const RowOffsets off = row_offsets(p.fwd, seq, w.b, s.head);
      return p.fwd.lse[off.lse + i * p.fwd.lse_row_stride];
    }
    return p.dsum[s.head * p.acc_rows + acc_row0<Cfg::kDqBulk>(p, seq, w.b) + i];
  }
  __device__ __forceinline__ void store_row(const Step& s, float raw) const {
    const float v = tid < 64 ? lse_log2(raw) : raw;
    asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(rows_of(s) + 4 * tid), "f"(v) : "memory");
  }

  __device__ __forceinline__ void release(std::uint32_t bar) const {
    __syncwarp();
    if (lane == 0) {
      mbar_arrive(bar);
    }
  }

  // K and V landed; key rows past a padded/packed length zeroed.
  __device__ __forceinline__ void wait_kv() const {
    mbar_wait(ring.kv_full(), 0);
    if (w.k_tail(a.p.fwd)) {
      const int t = 128 * wg + tid;
      zero_tile_rows<Cfg>(smem + Cfg::kOffK, Cfg::kKVColBlockBytes, w.seq.k_len - w.n0,
                          Cfg::kBlockN, t, Cfg::kConsumerThreads);
      zero_tile_rows<Cfg>(smem + Cfg::kOffV, Cfg::kKVColBlockBytes, w.seq.k_len - w.n0,
                          Cfg::kBlockN, t, Cfg::kConsumerThreads);
      named_bar_sync(1, Cfg::kConsumerThreads);
    }
  }

  // acc += A B over the block's 64 query rows: A = P^T or dS^T from registers, B = the stage's
  // dO (for dV) or Q (for dK), N-major.
  __device__ __forceinline__ void gemm_frags(float (&acc)[kAccRegs],
                                             const std::uint32_t (&f)[kSteps][4],
                                             std::uint32_t b_rows) const {
    const std::uint64_t db0 = sw128_desc(b_rows, Cfg::kQColBlockBytes, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      MmaKV::run(acc, f[kk], desc_advance(db0, kk * 2048), 1);
    }
    wgmma_commit();
  }

  // S^T = K Q^T and dP^T = V dO^T of step s, once its Q and dO landed (rows past a padded or
  // packed length zeroed first).
  __device__ __forceinline__ void issue_scores(const Step& s, float (&sa)[kSRegs],
                                               float (&dpa)[kSRegs]) const {
    const int st = BwdRing<Cfg>::stage(s.it);
    const std::uint32_t ph = BwdRing<Cfg>::parity(s.it);
    const std::uint32_t q = smem + Cfg::kOffQ + st * Cfg::kQBytes;
    const std::uint32_t d_o = smem + Cfg::kOffDo + st * Cfg::kQBytes;
    mbar_wait(ring.q_full(st), ph);
    mbar_wait(ring.do_full(st), ph);
    if (w.q_tail(a.p.fwd, s.m0)) { // warpgroup 0 zeroes Q's rows, 1 dO's
      zero_tile_rows<Cfg>(wg == 0 ? q : d_o, Cfg::kQColBlockBytes, w.seq.q_len - s.m0, BM, tid,
                          128);
      named_bar_sync(1, Cfg::kConsumerThreads);
    }
    mark(s, kMarkLoaded);
    gemm_rows(sa, smem + Cfg::kOffK + 64 * wg * 128, q);
    gemm_rows(dpa, smem + Cfg::kOffV + 64 * wg * 128, d_o);
  }

  // One step: S^T, dP^T, dV, dQ, dK issued in that order; wgmma groups complete in order, so
  // waiting for dQ leaves dK running while dQ is staged and reduced. (Issuing the next step's
  // S^T and dP^T before this step's dK is waited for, so that they overlap the staging, made
  // ptxas serialise the wgmma: accumulators in flight across the loop's back edge.)
  // The score loops come in two variants, with per-element masking where the tile needs it and
  // without (a uniform branch per warpgroup around each loop, not around the products: accumulators
  // carried into the next step through a branch made ptxas serialise the wgmma).
  template <bool kSoftcap>
  __device__ __forceinline__ void step(const Step& s) const {
    mark(s, kMarkStart);
    const bool masked = tile_masked(s.m0);
    const auto scores = [&](auto&& f) {
      if (masked) {
        each_score<true>(s.m0, f);
      } else {
        each_score<false>(s.m0, f);
      }
    };
    const int st = BwdRing<Cfg>::stage(s.it);
    const std::uint32_t q = smem + Cfg::kOffQ + st * Cfg::kQBytes;
    const std::uint32_t d_o = smem + Cfg::kOffDo + st * Cfg::kQBytes;
    const std::uint32_t ds = smem + Cfg::kOffDs + (s.it % 2) * Cfg::kDsBytes;
    const std::uint32_t rows = rows_of(s);
    const bool has_next = s.it + 1 < w.steps;
    const Step n = s.next(w);
    // The next step's LSE or D row, from global memory, loaded first: this step hides its
    // latency, and it is stored before this step's dS^T barrier, which orders it before the next
    // step's reads and after the step before's.
    const float next_raw = has_next ? row_raw(n) : 0.f;
    const ScoreGrad sg(a.p.fwd);
    // One pass after both products with a softcap (dS needs its derivative at the raw score) and
    // in fp16 (whose P conversions in the two-pass order spilled 24 bytes at head dim 128).
    constexpr bool kOnePass = kSoftcap || !Cfg::kBf16;
    // The two-pass order's LSE row, loaded before the products: loaded while they run, the loads
    // waited behind their shared-memory operand reads (H200 ncu, 2026-12-03).
    // D's row too at head dim 64 (at 128 that spilled: its accumulators take 64 more registers).
    constexpr bool kDEarly = !kOnePass && D == 64;
    float lse2[kRowVals], d[kRowVals];
    if constexpr (!kOnePass) {
      load_rows(rows, 0, lse2);
    }
    if constexpr (kDEarly) {
      load_rows(rows, 1, d);
    }
    float sa[kSRegs], dpa[kSRegs];
    issue_scores(s, sa, dpa);
    std::uint32_t pf[kSteps][4], dsf[kSteps][4];
    if constexpr (kOnePass) {
      wgmma_wait<0>();
      reg_fence(sa);
      reg_fence(dpa);
      mark(s, kMarkScores);
      float lse2[2], d[2]; // a column group's, loaded as its scores come (32 preloaded spilled)
      scores([&](int i, bool visible, int c) {
        if (i % 4 == 0) {
          row_pair(rows, 0, i / 4, lse2);
          row_pair(rows, 1, i / 4, d);
        }
        sa[i] = sg(sa[i], dpa[i], lse2[c % 2], d[c % 2], visible);
      });
      pack(sa, pf);
      pack(dpa, dsf);
      gemm_frags(dv, pf, d_o);
      mark(s, kMarkDvIssued);
    } else { // P and dV while dP^T's product runs, then dS while dV's runs
      wgmma_wait<1>();
      reg_fence(sa);
      mark(s, kMarkScores);
      scores([&](int i, bool visible, int c) { sa[i] = sg.prob(sa[i], lse2[c], visible); });
      pack(sa, pf);
      gemm_frags(dv, pf, d_o);
      mark(s, kMarkDvIssued);
      if constexpr (!kDEarly) {
        load_rows(rows, 1, d);
      }
      wgmma_wait<1>();
      reg_fence(dpa);
      // dS from P as the dV product reads it, rounded to the element type (tests/gpu/
      // backward_case.hpp's error model has dS inherit P's rounding): keeping P in fp32 as well
      // spilled at head dim 128.
      scores([&](int i, bool visible, int c) {
        dpa[i] = sg.dscore(unpacked(pf, i), dpa[i], d[c], visible);
      });
      pack(dpa, dsf);
    }
    if (has_next) {
      store_row(n, next_raw);
    }
    store_ds(dsf, ds);
    fence_proxy_async();
    mark(s, kMarkDsStored);
    float dq[kSRegs];
    if constexpr (Cfg::kDqSplit) {
      // This warpgroup's dS^T rows are ready for the other's dQ (arrive), its own for its dQ
      // over its own keys, which runs while it waits for the other's rows (a barrier of both
      // warpgroups before the whole product was ~6% of the step's stall samples: H200 ncu,
      // 2026-12-03). Barriers by step parity: a warpgroup can arrive for step s + 1 before
      // the other has waited for step s, never for s + 2 (it first waits for the other's s + 1).
      named_bar_arrive(6 + 2 * wg + s.it % 2, Cfg::kConsumerThreads);
      named_bar_sync(2 + wg, 128);
      gemm_dq<true>(dq, ds, wg);
      mark(s, kMarkOwnDq);
      named_bar_sync(6 + 2 * (1 - wg) + s.it % 2, Cfg::kConsumerThreads);
      mark(s, kMarkOtherRows);
      gemm_dq<false>(dq, ds, 1 - wg);
    } else {
      named_bar_sync(2 + wg, 128);
      gemm_dq<true>(dq, ds, wg);
      mark(s, kMarkOwnDq);
    }
    gemm_frags(dk, dsf, q);
    wgmma_wait<1>(); // dV and dQ done, dK running
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      reg_fence(pf[kk]);
    }
    reg_fence(dq);
    mark(s, kMarkDqReady);
    release(ring.do_empty(st));
    reduce_dq(dq, s);
    mark(s, kMarkReduced);
    wgmma_wait<0>(); // dK done: its A fragments may be overwritten, Q's stage refilled
    mark(s, kMarkDkReady);
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      reg_fence(dsf[kk]);
    }
    release(ring.q_empty(st));
  }

  // dK and dV of this warpgroup's keys (0 for keys no query sees), rounded to the element type.
  __device__ __forceinline__ void store_grads() const {
    const FlashBwdParams& p = a.p;
    // Deterministic mode reads the sequence's first tokens afresh (packed varlen: cu_seqlens,
    // cached): kept from the kernel's start, they were spilled at head dim 128.
    const BwdRowOffsets off =
        bwd_row_offsets(p, Cfg::kDet ? seq_span(p.fwd, w.b) : w.seq, w.b, w.kv * w.group, w.kv);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int key = kw0 + r0 + 8 * h;
      if (key >= w.key_rows) {
        continue;
      }
      auto* gdk =
          static_cast<std::uint32_t*>(p.dk) + (off.dk + key * p.dk_row_stride + 2 * (lane % 4)) / 2;
      auto* gdv =
          static_cast<std::uint32_t*>(p.dv) + (off.dv + key * p.dv_row_stride + 2 * (lane % 4)) / 2;
#pragma unroll
      for (int j = 0; j < D / 8; ++j) {
        gdk[4 * j] = pack2(dk[4 * j + 2 * h], dk[4 * j + 2 * h + 1], Cfg::kBf16);
        gdv[4 * j] = pack2(dv[4 * j + 2 * h], dv[4 * j + 2 * h + 1], Cfg::kBf16);
      }
    }
  }
};

template <class Cfg>
__device__ __forceinline__ void consume_steps(const BwdArgs& a, std::uint32_t smem,
                                              const BwdWork<Cfg>& w, int wg) {
  using C = BwdConsumer<Cfg>;
  float dk[C::kAccRegs], dv[C::kAccRegs];
#pragma unroll
  for (int i = 0; i < C::kAccRegs; ++i) {
    dk[i] = 0.f;
    dv[i] = 0.f;
  }
  const C c{.a = a, .smem = smem, .w = w, .wg = wg, .dk = dk, .dv = dv};
  if (w.steps > 0) {
    typename C::Step s = C::Step::first(w);
    c.store_row(s, c.row_raw(s));
    named_bar_sync(4 + wg, 128);
    c.wait_kv();
    const auto walk = [&]<bool kSoftcap>() {
      for (; s.it < w.steps; s = s.next(w)) {
        c.template step<kSoftcap>(s);
      }
    };
    if (a.p.fwd.softcap > 0.f) {
      walk.template operator()<true>();
    } else {
      walk.template operator()<false>();
    }
  }
  c.store_grads();
  if (!Cfg::kDet && c.lane == 0) {
    bulk_wait<0>(); // the warp's reductions are done with shared memory before the CTA exits
  }
}

} // namespace kattn::cuda_kernels::sm90
