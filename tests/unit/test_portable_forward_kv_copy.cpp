// The portable host forward copies fp32 K/V with interleaved heads ([B, S, K, H], K > 1) into
// contiguous per-(batch, KV head) rows, a slice of pairs at a time through one buffer of at most
// 4 MiB (portable_run_impl.hpp). The other tests' shapes fit one slice; these need several:
// one pair's K and V take S * (H + Hv) * 4 bytes, so S = 9000 at H = Hv = 64 (4.4 MiB) gives one
// pair per slice and S = 3000 (1.5 MiB) two, with a last slice of one pair when 5 pairs are
// split. A wrong slice offset or team range reads another head's keys or leaves output rows
// unwritten (poisoned with NaN), far beyond check_portable()'s 2x-naive tolerance. T stays small
// so that the fp64 reference is fast; causal bottom-right, a window and padded key lengths put
// the masked diagonal tiles and keys past k_len into the copied rows.
#include <doctest/doctest.h>

#include "test_portable_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

TEST_CASE("portable: K/V head copy, one (batch, KV head) pair per slice, GQA, causal") {
  Spec s = spec_of(2, 40, 9000, 6, 3, 64, 64);
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  check_portable(s);
}

TEST_CASE("portable: K/V head copy, uneven slices, window, padded keys") {
  Spec s = spec_of(1, 150, 3000, 5, 5, 64, 64);
  s.opt.window_left = 1000;
  s.opt.window_right = 30;
  s.opt.alignment = Alignment::bottom_right;
  check_portable(s);

  Spec p = spec_of(3, 100, 3000, 2, 2, 64, 64);
  p.q_lens = {100, 60, 1};
  p.k_lens = {3000, 2500, 7};
  p.opt.causal = true;
  p.opt.alignment = Alignment::bottom_right;
  check_portable(p);
}
