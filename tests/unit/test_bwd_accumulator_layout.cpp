// The backward's fp32 accumulator rows (kattn_kernels/bwd_geometry.hpp): every sequence owns
// whole 64-row tiles inside the workspace, and the tile order of dq_accum is the sm90 warps'
// fragment staging, one-to-one. A wrong tile start adds one sequence's dQ into another's rows; a
// wrong order scrambles dq without any device test being able to say where.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
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

// Deterministic mode's order (dq_order_ticket): for every query tile, the key blocks that add
// into it are exactly those whose own walk (rows_of_keys, as the sm90 kernel's BwdWork) visits
// the tile, and their tickets are 0, 1, ... in the order the walks reach it. A hole in the
// tickets makes the kernel wait forever; a key block outside them makes it trap.
TEST_CASE("bwd_accumulator: deterministic order tickets are 0..n-1 over exactly the key blocks "
          "that visit a tile") {
  std::mt19937 g(3706);
  std::uniform_int_distribution<int> len(0, 700), win(-1, 300), coin(0, 1);
  constexpr int kBlockN = 128, kBlockM = 64;
  for (int trial = 0; trial < 3000; ++trial) {
    const int q_len = len(g), k_len = len(g);
    const bool causal = coin(g) == 1;
    int left = win(g), right = causal ? 0 : win(g);
    if (coin(g) == 1 && !causal)
      left = right = -1; // no mask
    const auto rule = kattn::make_mask_rule<int>(q_len, k_len, coin(g) == 1, left, right);
    const int n_blocks = (k_len + kBlockN - 1) / kBlockN;
    for (int m0 = 0; m0 < q_len; m0 += kBlockM) {
      std::vector<int> tickets;
      std::vector<std::pair<int, int>> first_step; // (step at which the walk reaches m0, ticket)
      for (int n = 0; n < n_blocks; ++n) {
        const int last_key = std::min(n * kBlockN + kBlockN, k_len) - 1;
        const kattn::IndexRange<int> rows = rule.rows_of_keys(n * kBlockN, last_key);
        const int m_begin = rows.lo / kBlockM;
        const int m_end = rows.hi > rows.lo ? (rows.hi + kBlockM - 1) / kBlockM : m_begin;
        const bool visits = m0 / kBlockM >= m_begin && m0 / kBlockM < m_end;
        const int t = kattn::dq_order_ticket(rule, n, kBlockN, m0, kBlockM);
        CAPTURE(q_len);
        CAPTURE(k_len);
        CAPTURE(left);
        CAPTURE(right);
        CAPTURE(m0);
        CAPTURE(n);
        REQUIRE(visits == (t >= 0));
        if (visits) {
          tickets.push_back(t);
          first_step.emplace_back(m0 / kBlockM - m_begin, t);
        }
      }
      std::sort(tickets.begin(), tickets.end());
      for (std::size_t i = 0; i < tickets.size(); ++i)
        CHECK(tickets[i] == static_cast<int>(i));
      // A key block earlier in the order reaches the tile no later in its walk (walks start at
      // their first query block, as in deterministic mode), so no CTA waits on a later one.
      std::sort(first_step.begin(), first_step.end(),
                [](const auto& a, const auto& b) { return a.second < b.second; });
      for (std::size_t i = 1; i < first_step.size(); ++i)
        if (kattn::dq_order_descending(rule.window_right))
          CHECK(first_step[i - 1].first <= first_step[i].first);
    }
  }
}

TEST_CASE("bwd_accumulator: deterministic order counters: one per tile of each head, disjoint") {
  std::mt19937 g(3707);
  std::uniform_int_distribution<int> len(0, 300), count(1, 9), zero(0, 4);
  const int dummy = 0;
  for (int trial = 0; trial < 200; ++trial) {
    kattn::FlashBwdParams p;
    kattn::FlashFwdParams& f = p.fwd;
    f.B = count(g);
    f.N = count(g);
    f.K = 1;
    f.cu_seqlens_q = &dummy;
    std::vector<kattn::SeqSpan<int>> seqs;
    int t = 0;
    for (int b = 0; b < f.B; ++b) {
      kattn::SeqSpan<int> s;
      s.q_len = zero(g) == 0 ? 0 : len(g);
      s.q_tok0 = t;
      t += s.q_len;
      seqs.push_back(s);
    }
    f.total_q = t;
    p.acc_rows = kattn::acc_rows_total(f);
    std::vector<int> hits(static_cast<std::size_t>(kattn::dq_order_tiles(f)), 0);
    for (int n = 0; n < f.N; ++n)
      for (int b = 0; b < f.B; ++b)
        for (int m0 = 0; m0 < seqs[b].q_len; m0 += 64) {
          const std::int64_t slot = kattn::dq_order_slot(p, seqs[b], b, n, m0);
          REQUIRE(slot >= 0);
          REQUIRE(slot < kattn::dq_order_tiles(f));
          ++hits[static_cast<std::size_t>(slot)];
        }
    for (int h : hits)
      CHECK(h <= 1);
    CHECK(kattn::dq_order_ints(f) == kattn::dq_order_tiles(f) + f.B * f.K);
  }
}
