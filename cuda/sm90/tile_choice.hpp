// Which compiled tile configuration (fwd_config.cuh) serves a problem, and its name.
#pragma once

#include "fwd_config.cuh"
#include "kattn_cuda/flash_params.hpp"

namespace kattn::cuda_kernels::sm90 {

enum class TileChoice { h64, h64_short_causal, h128_short, h128_long_tail, h256 };

// The key length is the batch maximum for ragged batches. The boundaries are the measured
// crossovers (docs/cuda-sm90.md, "Tile configurations"): head dim 128 at 4096 keys (192-key
// blocks +1-2% there since round 5's carried turns), head dim 64 causal at 1024 keys (+8-12% below,
// -3..-5% at 2048 and above). Head dim 128 from 4096 keys: one configuration, 192-key blocks
// with a narrow (64-key) last block where it holds at most 64 keys; since round 9 it is as fast
// or faster than the same tile without the narrow path also where that path is not taken (8192
// keys: +0.1..+1.5% in six interleaved runs), so there is no second long configuration.
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
