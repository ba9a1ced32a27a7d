// Semantics rules alignment, causal, window, fully_masked_rows (docs/semantics.md) on the
// reference backend. Visibility is read off the output: with an identity V (Hv = S) each output
// row is the row of attention weights, which is > 0 exactly on the visible keys (random scores
// of O(1) never underflow). f64-vs-f64 rearrangements compare to 1e-13 (a few ulps).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

#include "common/oracle_attention.hpp"
#include "common/reference_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
constexpr double tight = 1e-13;

// Visibility pattern of batch 0, head 0 as strings, "x" = visible, "." = not.
std::vector<std::string> pattern(Spec s) {
  s.Hv = s.S;
  Attn a(s);
  set_identity_v(a);
  a.forward();
  std::vector<std::string> rows;
  for (std::int64_t i = 0; i < s.T; ++i) {
    std::string r;
    for (bool vis : visible_keys(a, 0, 0, i))
      r += vis ? 'x' : '.';
    rows.push_back(r);
  }
  return rows;
}

Spec masked(std::int64_t T, std::int64_t S, Alignment al, bool causal, std::int64_t left = -1,
            std::int64_t right = -1) {
  Spec s = spec_of(1, T, S, 1, 1, 4, S);
  s.opt.alignment = al;
  s.opt.causal = causal;
  s.opt.window_left = left;
  s.opt.window_right = right;
  return s;
}
} // namespace

// ------------------------------------------------------------------------------- alignment

TEST_CASE("semantics/alignment: worked example, causal T=2 S=4 in both alignments") {
  CHECK(pattern(masked(2, 4, Alignment::top_left, true)) ==
        std::vector<std::string>{"x...", "xx.."});
  CHECK(pattern(masked(2, 4, Alignment::bottom_right, true)) ==
        std::vector<std::string>{"xxx.", "xxxx"});
}

TEST_CASE("semantics/alignment: bottom_right with T < S sees the last keys") {
  // Decode: one query attends to every key; chunked prefill: the last query sees the last key.
  CHECK(pattern(masked(1, 6, Alignment::bottom_right, true)) == std::vector<std::string>{"xxxxxx"});
  CHECK(pattern(masked(1, 6, Alignment::top_left, true)) == std::vector<std::string>{"x....."});
  const auto p = pattern(masked(3, 7, Alignment::bottom_right, true));
  CHECK(p == std::vector<std::string>{"xxxxx..", "xxxxxx.", "xxxxxxx"});
}

TEST_CASE("semantics/alignment: T > S bottom_right leaves the first T - S rows without keys") {
  CHECK(pattern(masked(5, 3, Alignment::bottom_right, true)) ==
        std::vector<std::string>{"...", "...", "x..", "xx.", "xxx"});
  CHECK(pattern(masked(5, 3, Alignment::top_left, true)) ==
        std::vector<std::string>{"x..", "xx.", "xxx", "xxx", "xxx"});
}

TEST_CASE("semantics/alignment: both alignments agree when T == S") {
  Spec s = spec_of(2, 6, 6, 2, 1, 4, 4);
  s.opt.window_left = 2;
  s.opt.window_right = 1;
  s.alibi = 1;
  Attn tl(s);
  s.opt.alignment = Alignment::bottom_right;
  Attn br(s);
  tl.forward();
  br.forward();
  CHECK(max_abs_diff(tl.out_values(), br.out_values()) == 0.0);
}

TEST_CASE("semantics/alignment: bottom_right uses each batch entry's own lengths") {
  // Padded: batch 0 has q_len 2, k_len 3 inside T = 4, S = 5. Its last valid query (i = 1)
  // must see its last valid key (j = 2) and nothing beyond.
  Spec s = spec_of(2, 4, 5, 1, 1, 4, 5);
  s.q_lens = {2, 4};
  s.k_lens = {3, 5};
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  Attn a(s);
  set_identity_v(a);
  a.forward();
  CHECK(visible_keys(a, 0, 0, 0) == std::vector<bool>{true, true, false, false, false});
  CHECK(visible_keys(a, 0, 0, 1) == std::vector<bool>{true, true, true, false, false});
  CHECK(visible_keys(a, 1, 0, 0) == std::vector<bool>{true, true, false, false, false});
  CHECK(visible_keys(a, 1, 0, 3) == std::vector<bool>{true, true, true, true, true});
}

// ---------------------------------------------------------------------------------- causal

TEST_CASE("semantics/causal: codelab check: first row differs, last row equal") {
  Spec s = spec_of(2, 8, 8, 2, 2, 16, 16);
  Attn full(s);
  s.opt.causal = true;
  Attn causal(s);
  full.forward();
  causal.forward();
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t n = 0; n < 2; ++n) {
      double first = 0, last = 0;
      const auto fo = full.out_values(), co = causal.out_values();
      for (std::int64_t f = 0; f < 16; ++f) {
        first = std::max(first, std::abs(fo[idx4(full.out.view, b, 0, n, f)] -
                                         co[idx4(causal.out.view, b, 0, n, f)]));
        last = std::max(last, std::abs(fo[idx4(full.out.view, b, 7, n, f)] -
                                       co[idx4(causal.out.view, b, 7, n, f)]));
      }
      CHECK(first > 1e-3);
      CHECK(last == 0.0); // the last row sees every key in both: identical arithmetic
    }
}

TEST_CASE("semantics/causal: equals the window (left -1, right 0) in both alignments") {
  for (auto al : {Alignment::top_left, Alignment::bottom_right}) {
    Spec s = spec_of(2, 5, 8, 2, 1, 4, 4);
    s.opt.alignment = al;
    s.opt.causal = true;
    Attn c(s);
    s.opt.causal = false;
    s.opt.window_right = 0;
    Attn w(s);
    c.forward();
    w.forward();
    CHECK(max_abs_diff(c.out_values(), w.out_values()) == 0.0);
  }
}

TEST_CASE("semantics/causal: row i equals unmasked attention over keys 0..i") {
  Spec s = spec_of(1, 5, 5, 1, 1, 4, 4);
  s.opt.causal = true;
  Attn a(s);
  a.forward();
  const std::vector<double> out = a.out_values();
  for (std::int64_t i = 0; i < 5; ++i) {
    Attn prefix(spec_of(1, 1, i + 1, 1, 1, 4, 4));
    const std::vector<double> q = read_logical(a.q.view), k = read_logical(a.k.view),
                              v = read_logical(a.v.view);
    write_logical(prefix.q.view, {q.begin() + i * 4, q.begin() + (i + 1) * 4});
    write_logical(prefix.k.view, {k.begin(), k.begin() + (i + 1) * 4});
    write_logical(prefix.v.view, {v.begin(), v.begin() + (i + 1) * 4});
    prefix.forward();
    const std::vector<double> po = prefix.out_values();
    for (std::int64_t f = 0; f < 4; ++f)
      CHECK(std::abs(po[static_cast<std::size_t>(f)] - out[static_cast<std::size_t>(i * 4 + f)]) <=
            tight);
  }
}

// ---------------------------------------------------------------------------------- window

TEST_CASE(
    "semantics/window: inclusive bounds (worked example T=S=5, L=1, R=0: query 3 sees 2, 3)") {
  const auto p = pattern(masked(5, 5, Alignment::top_left, false, 1, 0));
  CHECK(p[3] == "..xx.");
  CHECK(p == std::vector<std::string>{"x....", "xx...", ".xx..", "..xx.", "...xx"});
  CHECK(pattern(masked(4, 6, Alignment::top_left, false, 0, 2)) ==
        std::vector<std::string>{"xxx...", ".xxx..", "..xxx.", "...xxx"});
}

TEST_CASE("semantics/window: -1 is unbounded on that side") {
  CHECK(pattern(masked(3, 5, Alignment::top_left, false, -1, 1)) ==
        std::vector<std::string>{"xx...", "xxx..", "xxxx."});
  CHECK(pattern(masked(3, 5, Alignment::top_left, false, 1, -1)) ==
        std::vector<std::string>{"xxxxx", "xxxxx", ".xxxx"});
  CHECK(pattern(masked(3, 5, Alignment::top_left, false, -1, -1)) ==
        std::vector<std::string>{"xxxxx", "xxxxx", "xxxxx"});
}

TEST_CASE("semantics/window: random windows follow i + d - L <= j <= i + d + R") {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> len(1, 9), w(-1, 5);
  for (int trial = 0; trial < 30; ++trial) {
    const std::int64_t T = len(rng), S = len(rng), L = w(rng), R = w(rng);
    const Alignment al = trial % 2 ? Alignment::bottom_right : Alignment::top_left;
    const auto p = pattern(masked(T, S, al, false, L, R));
    const std::int64_t d = al == Alignment::bottom_right ? S - T : 0;
    for (std::int64_t i = 0; i < T; ++i)
      for (std::int64_t j = 0; j < S; ++j) {
        const bool expect = (L < 0 || j >= i + d - L) && (R < 0 || j <= i + d + R);
        CAPTURE(trial);
        CAPTURE(i);
        CAPTURE(j);
        CHECK((p[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] == 'x') == expect);
      }
  }
}

TEST_CASE("semantics/window: causal with a left window is a sliding window") {
  CHECK(pattern(masked(5, 5, Alignment::top_left, true, 2)) ==
        std::vector<std::string>{"x....", "xx...", "xxx..", ".xxx.", "..xxx"});
}

// ----------------------------------------------------------------------- fully_masked_rows

namespace {
// Every row in `empty_rows` of batch 0 / head 0 must be: out 0, lse -inf, dq 0; nothing NaN.
void check_empty_rows(Attn& a, const std::vector<std::int64_t>& empty_rows) {
  a.forward();
  a.backward();
  const std::vector<double> out = a.out_values(), lse = a.lse_values(),
                            dq = read_logical(a.dq.view);
  CHECK(all_finite(out));
  CHECK(all_finite(dq));
  CHECK(all_finite(read_logical(a.dk.view)));
  CHECK(all_finite(read_logical(a.dv.view)));
  if (a.spec.bias)
    CHECK(all_finite(a.dbias.to_doubles()));
  for (std::int64_t i = 0; i < a.spec.T; ++i) {
    const bool empty = std::find(empty_rows.begin(), empty_rows.end(), i) != empty_rows.end();
    CAPTURE(i);
    CHECK((lse[static_cast<std::size_t>(i)] == -INFINITY) == empty);
    double o = 0, g = 0;
    for (std::int64_t f = 0; f < a.spec.Hv; ++f)
      o = std::max(o, std::abs(out[idx4(a.out.view, 0, i, 0, f)]));
    for (std::int64_t h = 0; h < a.spec.H; ++h)
      g = std::max(g, std::abs(dq[idx4(a.dq.view, 0, i, 0, h)]));
    CHECK((o == 0.0) == empty);
    // (A row with a single visible key also has dq = 0: its softmax weight is constant 1.)
    if (empty)
      CHECK(g == 0.0);
  }
}
} // namespace

TEST_CASE("semantics/fully_masked_rows: output 0, LSE -inf, zero gradients (bottom_right T > S)") {
  Spec s = spec_of(1, 6, 3, 1, 1, 4, 4);
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  s.bias = true;
  Attn a(s);
  check_empty_rows(a, {0, 1, 2});
  // No gradient reaches the bias of the empty rows.
  const std::vector<double> db = a.dbias.to_doubles();
  for (std::size_t e = 0; e < 9; ++e)
    CHECK(db[e] == 0.0);
}

TEST_CASE("semantics/fully_masked_rows: an all-false boolean mask row") {
  Spec s = spec_of(1, 4, 5, 1, 1, 4, 4);
  s.mask = true;
  s.mask_density = 1.0;
  Attn a(s);
  for (std::int64_t j = 0; j < 5; ++j)
    a.mask.set_int(2 * 5 + j, 0);
  check_empty_rows(a, {2});
}

TEST_CASE("semantics/fully_masked_rows: a row whose scores are all -inf through the bias") {
  Spec s = spec_of(1, 4, 5, 1, 1, 4, 4);
  s.bias = true;
  Attn a(s);
  std::vector<double> bias = a.bias.to_doubles();
  for (std::int64_t j = 0; j < 5; ++j)
    bias[static_cast<std::size_t>(1 * 5 + j)] = -INFINITY;
  bias[3 * 5 + 4] = -INFINITY; // a single -inf entry only removes that key
  write_logical(a.bias.view(), bias);
  check_empty_rows(a, {1});
  CHECK(all_finite(a.dbias.to_doubles()));
}

TEST_CASE("semantics/fully_masked_rows: a window that excludes every key") {
  // Window (0, 0), top_left: query i sees key i only; with k_len 1 (padded) queries 1 and 2
  // have no key left.
  Spec s = spec_of(1, 3, 8, 1, 1, 4, 4);
  s.opt.window_left = 0;
  s.opt.window_right = 0;
  s.k_lens = {1};
  Attn a(s);
  check_empty_rows(a, {1, 2});
  // Same lengths, bottom_right (d = k_len - q_len = -2): only query 2 reaches key 0.
  s.opt.alignment = Alignment::bottom_right;
  Attn b(s);
  check_empty_rows(b, {0, 1});
}
