// Which compiled tile configuration (tile_policy.hpp) serves a problem, and its name.
#pragma once

#include "kattn_kernels/flash_params.hpp"
#include "tile_policy.hpp"

namespace kattn::cuda_kernels::sm90 {

// The key length is the batch maximum for ragged batches. The boundaries are the measured
// crossovers (docs/cuda-sm90.md, "Tile configurations"): head dim 128 at 4096 keys (192-key
// blocks +1-2% there), head dim 64 causal at 1024 keys (+8-12% below, -3..-5% from 2048). One
// head dim 128 configuration from 4096 keys: its narrow-last-block path costs nothing where it
// is not taken (round 9).
inline TileChoice choose_tile(const FlashFwdParams& p) {
  if (p.H == 64) {
    const bool causal = p.window_right == 0 && p.window_left < 0;
    return causal && p.S <= 1024 ? TileChoice::h64_short_causal : TileChoice::h64;
  }
  if (p.H == 128) {
    if (p.S < 4096) {
      return TileChoice::h128_short;
    }
    return TileChoice::h128_long_tail;
  }
  return TileChoice::h256;
}

// Head dim, then what differs from the plain tile (consumer warpgroups x 64 query rows, key
// block 128; head dim 256: key block 80).
inline const char* tile_name(TileChoice c) {
  switch (c) {
  case TileChoice::h64:
    return "h64_m192";
  case TileChoice::h64_short_causal:
    return "h64_m128_paired";
  case TileChoice::h128_short:
    return "h128_paired_q2";
  case TileChoice::h128_long_tail:
    return "h128_n192_tail64";
  case TileChoice::h256:
    return "h256_n80_paired";
  }
  return "?";
}

} // namespace kattn::cuda_kernels::sm90
