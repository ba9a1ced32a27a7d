// The tile policy of the sm90 forward: every knob of each compiled configuration, per class of
// problem (head dim, causal, long keys); tile_choice.hpp picks the class of a problem. The
// measurements behind each value are in docs/cuda-sm90.md ("Tile configurations", "History").
#pragma once

#include "fwd_config.cuh"

namespace kattn::cuda_kernels::sm90 {

// One compiled configuration per class: head dim 64 (causal up to 1024 keys: short_causal),
// head dim 128 below 4096 keys (short) and from 4096 (long_tail), head dim 256.
enum class TileChoice { h64, h64_short_causal, h128_short, h128_long_tail, h256 };

constexpr int tile_head_dim(TileChoice c) {
  switch (c) {
  case TileChoice::h64:
  case TileChoice::h64_short_causal:
    return 64;
  case TileChoice::h128_short:
  case TileChoice::h128_long_tail:
    return 128;
  case TileChoice::h256:
    return 256;
  }
  return 0; // not a TileChoice
}

// Every knob of a class's configuration, with the measured reason beside it (in the style of
// FlashAttention-3's tile_size_fwd_sm90()).
constexpr FwdKnobs tile_policy(TileChoice c) {
  const int hd = tile_head_dim(c);
  const bool m192 = c == TileChoice::h64;                 // head dim 64's 192-row tiles
  const bool long_keys = c == TileChoice::h128_long_tail; // head dim 128 from 4096 keys
  return FwdKnobs{
      // 192 rows halve the K/V bytes per FLOP that limit head dim 64 (v3); causal up to 1024
      // keys: 128-row tiles waste less on the diagonal (+8-12%, round 2).
      .consumer_wgs = m192 ? 3 : 2,
      // Head dim 256: S is 40 registers beside O's 128, and Q + 2 stages fill the 227 KB.
      // Long keys: fewer, longer blocks amortise the per-block waits and turns (+1-8%, round 5).
      .block_n = hd == 256   ? 80
                 : long_keys ? 192
                             : 128,
      .stages = hd == 64 ? 3 : 2, // head dim 128: 3 stages 5-10% slower (v2)
      // Off at head dim 256: its GEMMs are long next to its softmax (+5-8% from 4k keys).
      .ping_pong = hd != 256,
      // Head dim 128 below 4096 keys: the next Q loads under this tile (with pairing +5-29%).
      .q_stages = c == TileChoice::h128_short ? 2 : 1,
      // K/V read once per pair (single tiles were HBM-bound at small T, round 2); pairing the
      // 192-row tiles lost up to 22%.
      .paired = !m192,
      // +5-6% for the 192-row tiles (round 4); head dim 256 spilled without it; head dim 128
      // neutral to -6%.
      .uniform_wg = m192 || hd == 256,
      .late_rescale = m192,         // +1-2% (round 5); head dim 128 -2..-15%
      .tail_n = long_keys ? 64 : 0, // last block of <= 64 keys: +1-2% at 4096 keys (round 6)
      .lazy_rescale = hd == 256,    // +2-7% (round 9); head dims 64, 128 -0.5..-4%
      .split_last_pv = long_keys,   // +1-2% at 4096 keys (round 9)
      // +1.5-2.7% (round 9); mixed at head dim 256 and for the short head dim 128 tile.
      .desc_advance = m192 || long_keys,
  };
}

// The configuration the library compiles for a class (inst/*.cu); kSeqMajor: for
// sequence-major q, k, v (head dims 64 and 128), with the same knobs.
template <bool kBf16, TileChoice kChoice, bool kSeqMajor = false>
using Sm90Config = FwdConfig<kBf16, tile_head_dim(kChoice), tile_policy(kChoice), kSeqMajor>;

} // namespace kattn::cuda_kernels::sm90
