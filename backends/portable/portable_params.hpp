// What the portable kernels read about a problem, resolved once on the host into plain copyable
// structs (raw pointers + 64-bit element strides) that are valid inside kernels on any device.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "kattn_kernels/mask_rule.hpp"
#include "kattn_kernels/seq_geometry.hpp"
#include "kokkosattn/detail/philox.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn::portable {

using Index = std::int64_t;

// q, k, v, out and their gradients addressed as [batch, token, head, dim]. Packed varlen
// tensors have no batch dim: sb = 0 and the token index already includes cu_seqlens[b].
// off shifts every index (a scratch copy that holds only some of the heads, see
// portable_run_impl.hpp).
template <class T>
struct Rows {
  T* data = nullptr;
  Index sb = 0, st = 0, sh = 0, sd = 0, off = 0;
  KOKKOS_INLINE_FUNCTION Index at(Index b, Index t, Index h, Index d) const {
    return off + b * sb + t * st + h * sh + d * sd;
  }
};

// A tensor broadcast over the score shape [B|1, N|1, T, S] (bias, boolean mask, dbias):
// broadcast dims (extent 1, or missing because the rank is lower) carry stride 0.
struct ScoreSide {
  void* data = nullptr;
  DType dtype = DType::f32;
  Index eb = 1, en = 1; // extents of the batch and head dims (1 = broadcast)
  Index sb = 0, sn = 0, si = 0, sj = 0;
  KOKKOS_INLINE_FUNCTION Index at(Index b, Index n, Index i, Index j) const {
    return b * sb + n * sn + i * si + j * sj;
  }
};

// One int32 per batch entry (seqlens) or per batch boundary (cu_seqlens).
struct Ints {
  const std::int32_t* data = nullptr;
  Index s = 0;
  KOKKOS_INLINE_FUNCTION Index operator[](Index b) const { return data[b * s]; }
  KOKKOS_INLINE_FUNCTION explicit operator bool() const { return data != nullptr; }
};

// Where sequence b lives and how long it is (the kernel contract's rule).
using Seq = SeqSpan<Index>;

// Everything except the typed q/k/v/out views.
struct Common {
  Index B = 0, T = 0, S = 0, N = 0, K = 0, H = 0, Hv = 0, group = 1;
  bool packed = false;
  double scale = 1.0, softcap = 0.0;
  bool bottom_right = false;
  Index window_left = -1, window_right = -1;

  ScoreSide bias, mask;
  const float* slopes = nullptr;
  Index slopes_sb = 0, slopes_sn = 0;
  Ints seqlens_q, seqlens_k, cu_q, cu_k;

  const float* sinks = nullptr; // extras.sinks, [n] (rule sinks); nullptr: none
  Index sinks_s = 0;

  float* lse = nullptr; // optional forward output, [b, n, token]
  Index lse_sb = 0, lse_sn = 0, lse_st = 0;

  bool dropout = false;
  std::uint64_t seed = 0, offset = 0;
  std::uint32_t keep_threshold = 0;
  double keep_scale = 1.0; // 1 / (1 - p)

  KOKKOS_INLINE_FUNCTION Seq seq(Index b) const {
    return seq_span<Index>(b, T, S, cu_q, cu_k, seqlens_q, seqlens_k);
  }

  KOKKOS_INLINE_FUNCTION MaskRule rule(const Seq& s) const {
    return make_mask_rule(s.q_len, s.k_len, bottom_right, window_left, window_right);
  }

  // Anything beyond the window rule that changes individual scores.
  KOKKOS_INLINE_FUNCTION bool has_score_extras() const {
    return softcap > 0 || bias.data != nullptr || mask.data != nullptr || slopes != nullptr;
  }

  // A query row's end (rule sinks): from the running max m and sum l of exp(s - m) over its
  // keys, whether it has key weight (live), the factor that normalises its accumulated output
  // (out = acc * inv) and its LSE, with head n's sink in the denominator. Rows past a padded
  // sequence (in_rows false) and keyless rows get out 0 and LSE -inf, or with a sink LSE = sink;
  // a NaN or +inf sink makes the row NaN.
  template <class Acc>
  KOKKOS_INLINE_FUNCTION void end_row(Index n, bool in_rows, Acc m, Acc l, bool& live, Acc& inv,
                                      Acc& row_lse) const {
    live = in_rows && !(l <= 0);
    inv = live ? Acc(1) / l : Acc(0);
    row_lse = live ? m + Kokkos::log(l) : -Kokkos::Experimental::infinity_v<Acc>;
    if (sinks == nullptr || !in_rows)
      return;
    const Acc s = static_cast<Acc>(sinks[n * sinks_s]);
    if (!live) {
      const bool poisoned = !(s < Kokkos::Experimental::infinity_v<Acc>); // NaN or +inf
      row_lse = poisoned ? Kokkos::Experimental::quiet_NaN_v<Acc> : s;
      inv = poisoned ? row_lse : Acc(0);
      return;
    }
    const Acc top = s > m ? s : m; // a NaN sink propagates through the sum below
    const Acc shift = Kokkos::exp(m - top);
    const Acc sum = l * shift + Kokkos::exp(s - top);
    inv = shift / sum;
    row_lse = top + Kokkos::log(sum);
  }

  KOKKOS_INLINE_FUNCTION float slope(Index b, Index n) const {
    return slopes[b * slopes_sb + n * slopes_sn];
  }

  KOKKOS_INLINE_FUNCTION bool keep(Index b, Index n, Index i, Index j) const {
    return dropout_keep(seed, offset, static_cast<std::uint64_t>(b * N + n),
                        static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j),
                        keep_threshold);
  }

  // The four draws of keys 4g .. 4g+3 (one Philox call, as philox.hpp allows), so that a row
  // of keys costs a quarter of the per-key calls; keep_bit() reads one of them.
  KOKKOS_INLINE_FUNCTION Philox4x32 keep_draws(Index b, Index n, Index i, Index g) const {
    const Philox4x32 ctr{{static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(i),
                          static_cast<std::uint32_t>(b * N + n),
                          static_cast<std::uint32_t>(offset)}};
    return philox4x32_10(ctr, static_cast<std::uint32_t>(seed),
                         static_cast<std::uint32_t>(seed >> 32));
  }
  KOKKOS_INLINE_FUNCTION bool keep_bit(const Philox4x32& draws, Index j) const {
    return (draws.v[j & 3] >> 8) < keep_threshold;
  }
};

// The block of query rows a forward team owns: league entry lr = (b * N + n) * n_qblocks + qb,
// rows [i0, i0 + Br) of sequence b, head n (KV head kh). rows: those with a query; rows_out:
// those the team writes (padded rows up to T get 0 / -inf; packed sequences only their own).
struct QueryBlock {
  Index b = 0, n = 0, kh = 0, i0 = 0;
  Seq sq;
  MaskRule rule;
  int rows = 0, rows_out = 0;
};

KOKKOS_INLINE_FUNCTION QueryBlock query_block(const Common& c, Index lr, Index n_qblocks, int Br) {
  QueryBlock q;
  const Index qb = lr % n_qblocks;
  q.n = (lr / n_qblocks) % c.N;
  q.b = lr / (n_qblocks * c.N);
  q.kh = q.n / c.group;
  q.sq = c.seq(q.b);
  q.rule = c.rule(q.sq);
  q.i0 = qb * Br;
  q.rows = static_cast<int>(Kokkos::clamp(q.sq.q_len - q.i0, Index(0), Index(Br)));
  q.rows_out = c.packed ? q.rows : static_cast<int>(Kokkos::clamp(c.T - q.i0, Index(0), Index(Br)));
  return q;
}

// The block of keys a backward dk/dv team owns: league entry lr = (b * K + kh) * n_kblocks + kb,
// keys [j0, j0 + Bk) of sequence b, KV head kh. keys: those inside the sequence; keys_out: those
// the team writes (padded keys up to S get 0; packed sequences only their own).
struct KeyBlock {
  Index b = 0, kh = 0, j0 = 0;
  Seq sq;
  MaskRule rule;
  int keys = 0, keys_out = 0;
};

KOKKOS_INLINE_FUNCTION KeyBlock key_block(const Common& c, Index lr, Index n_kblocks, int Bk) {
  KeyBlock k;
  k.kh = (lr / n_kblocks) % c.K;
  k.b = lr / (n_kblocks * c.K);
  k.sq = c.seq(k.b);
  k.rule = c.rule(k.sq);
  k.j0 = (lr % n_kblocks) * Bk;
  k.keys = static_cast<int>(Kokkos::clamp(k.sq.k_len - k.j0, Index(0), Index(Bk)));
  k.keys_out = c.packed ? k.keys : static_cast<int>(Kokkos::clamp(c.S - k.j0, Index(0), Index(Bk)));
  return k;
}

// Host side: the Common part of a validated problem, and typed row views of its tensors.
Common make_common(const ForwardProblem& p, const Dims& d);

// A backward problem without score extras, dropout, dbias or sinks (what the device backward
// serves).
bool plain_backward(const BackwardProblem& p, const Dims& d);

template <class T>
Rows<T> make_rows(const Tensor& t, bool packed) {
  Rows<T> r;
  r.data = static_cast<T*>(t.data);
  if (packed) {
    r.sb = 0, r.st = t.stride[0], r.sh = t.stride[1], r.sd = t.stride[2];
  } else {
    r.sb = t.stride[0], r.st = t.stride[1], r.sh = t.stride[2], r.sd = t.stride[3];
  }
  return r;
}

ScoreSide make_score_side(const Tensor& t);

} // namespace kattn::portable
