// The backward's fp32 accumulator rows (kattn_kernels/bwd_geometry.hpp): every sequence owns
// whole 64-row tiles inside the workspace, and the tile order of dq_accum is the sm90 warps'
// fragment staging, one-to-one. A wrong tile start adds one sequence's dQ into another's rows; a
// wrong order scrambles dq without any device test being able to say where.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kattn_kernels/bwd_geometry.hpp"

namespace {

using I = std::int64_t;

// Checks that sequences of `lens` (their first tokens in `tok0`) get disjoint, ascending,
// tile-aligned accumulator ranges inside acc_rows_total.
void check_tiles(const kattn::FlashFwdParams& f, const std::vector<I>& tok0,
                 const std::vector<I>& lens) {
  const I total = kattn::acc_rows_total(f);
  CHECK(total % kattn::kAccTileRows == 0);
  I end = 0;
  for (int b = 0; b < f.B; ++b) {
    const I r0 = kattn::acc_row0_of<true>(f, tok0[b], b);
    CHECK(r0 % kattn::kAccTileRows == 0);
    CHECK(r0 >= end);
    end = r0 + kattn::acc_tiled_rows(lens[b]);
    CHECK(end <= total);
  }
}

} // namespace

TEST_CASE("bwd_accumulator: packed sequences own whole tiles (random lengths, empty ones too)") {
  std::mt19937 g(1217);
  std::uniform_int_distribution<int> len(0, 300), count(1, 24), zero(0, 4);
  const int dummy = 0;
  for (int trial = 0; trial < 500; ++trial) {
    kattn::FlashFwdParams f;
    f.B = count(g);
    f.cu_seqlens_q = &dummy; // only its presence matters here
    std::vector<I> tok0, lens;
    I t = 0;
    for (int b = 0; b < f.B; ++b) {
      tok0.push_back(t);
      lens.push_back(zero(g) == 0 ? 0 : len(g));
      t += lens.back();
    }
    f.total_q = t;
    check_tiles(f, tok0, lens);
  }
}

TEST_CASE("bwd_accumulator: batched sequences of T rows own T rounded up to a tile") {
  for (int T : {1, 63, 64, 65, 127, 1000, 4096}) {
    kattn::FlashFwdParams f;
    f.B = 5;
    f.T = T;
    std::vector<I> tok0(5, 0), lens(5, T);
    check_tiles(f, tok0, lens);
    CHECK(kattn::acc_rows_total(f) == 5 * ((T + 63) / 64 * 64));
  }
}

TEST_CASE("bwd_accumulator: tile order is the m64n64 fragment staging, one float each") {
  // wgmma m64nN accumulators: warp w, lane l holds rows 16 w + l / 4 (+ 8 for h = 1) and columns
  // 8 j + 2 (l % 4) (+ e) of column group j in register 4 j + 2 h + e; the sm90 consumer stores
  // registers 4 j .. 4 j + 3 at float 4 (32 j + l) of the warp's 1024-float block, and the
  // 64-column half `half` of a head dim 128 tile is the block set at 4096 half.
  for (int H : {64, 128}) {
    std::vector<int> hits(static_cast<std::size_t>(64 * H), 0);
    for (int half = 0; half < H / 64; ++half)
      for (int w = 0; w < 4; ++w)
        for (int l = 0; l < 32; ++l)
          for (int j = 0; j < 8; ++j)
            for (int h = 0; h < 2; ++h)
              for (int e = 0; e < 2; ++e) {
                const int row = 16 * w + l / 4 + 8 * h;
                const int col = 64 * half + 8 * j + 2 * (l % 4);
                const int staged = 4096 * half + 1024 * w + 4 * (32 * j + l) + 2 * h + e;
                const int at = kattn::tile_order_offset(row, col) + e;
                CHECK(at == staged);
                if (at >= 0 && at < 64 * H)
                  ++hits[static_cast<std::size_t>(at)];
              }
    for (int n : hits)
      CHECK(n == 1);
    // Rows of a later tile land at the same offsets as the first tile's.
    CHECK(kattn::tile_order_offset(64 + 17, 6) == kattn::tile_order_offset(17, 6));
  }
}
