// Padded batches (seqlens_q/k) and packed varlen (cu_seqlens) in the cudnn backend against the
// f64 reference (tolerances: cudnn_case.hpp, backward_case.hpp). Besides the tolerance,
// every value the reference makes exactly 0 (rows past q_len, rows without visible keys,
// gradients of padding) must be exactly 0, and their LSE exactly -inf: cuDNN leaves those rows
// undefined and the backend's fix-up kernels (cudnn_varlen.hpp) write them.
#include <doctest/doctest.h>

#include <vector>

#include "gpu/backward_case.hpp"

namespace {

using kattn::Alignment;
using kattn::DType;
using kattn::test::check_backward_matches;
using kattn::test::check_matches;
using kattn::test::Spec;

Spec padded(std::vector<std::int64_t> q_lens, std::vector<std::int64_t> k_lens, std::int64_t T,
            std::int64_t S) {
  Spec s;
  s.dtype = DType::bf16;
  s.B = static_cast<std::int64_t>(q_lens.empty() ? k_lens.size() : q_lens.size());
  s.T = T, s.S = S, s.N = 4, s.K = 2, s.H = 64, s.Hv = 64;
  s.q_lens = std::move(q_lens);
  s.k_lens = std::move(k_lens);
  s.seed = static_cast<std::uint64_t>(T * 7 + S);
  return s;
}

Spec packed(std::vector<std::int64_t> q_lens, std::vector<std::int64_t> k_lens) {
  Spec s = padded(std::move(q_lens), std::move(k_lens), 0, 0);
  s.packed = true;
  s.seed += 11;
  return s;
}

Spec with_mask(Spec s, bool causal, Alignment a, std::int64_t left = -1) {
  s.opt.causal = causal;
  s.opt.alignment = a;
  s.opt.window_left = left;
  return s;
}

} // namespace

TEST_CASE("cudnn/padded: forward with per-batch lengths, masks in both alignments") {
  const Spec base = padded({128, 77, 1}, {128, 50, 113}, 128, 128);
  check_matches(base);
  check_matches(with_mask(base, true, Alignment::top_left));
  check_matches(with_mask(base, true, Alignment::bottom_right)); // per-batch diagonal
  check_matches(with_mask(base, true, Alignment::top_left, 9));
  check_matches(padded({}, {30, 96}, 64, 96));      // key lengths only
  check_matches(padded({64, 17}, {}, 64, 96));      // query lengths only
  Spec f16 = padded({100, 3}, {90, 200}, 100, 200); // T != S, f16
  f16.dtype = DType::f16;
  check_matches(with_mask(f16, true, Alignment::bottom_right));
}

TEST_CASE("cudnn/padded: rows without keys (k_len = 0; q_len > k_len bottom-right) are 0/-inf") {
  check_matches(padded({64, 64, 64}, {64, 0, 20}, 64, 64));
  check_matches(with_mask(padded({64, 64}, {64, 20}, 64, 64), true, Alignment::bottom_right));
}

TEST_CASE("cudnn/padded: backward, including batches with rows that see no key") {
  check_backward_matches(padded({128, 77, 1}, {128, 50, 113}, 128, 128));
  check_backward_matches(with_mask(padded({96, 40}, {96, 70}, 96, 96), true, Alignment::top_left));
  check_backward_matches(
      with_mask(padded({96, 40}, {96, 70}, 96, 96), true, Alignment::bottom_right));
  check_backward_matches(padded({64, 64, 64}, {64, 0, 20}, 64, 64));
}

TEST_CASE("cudnn/packed: forward over ragged sequences, masks in both alignments") {
  const Spec base = packed({100, 37, 128, 1}, {90, 128, 1, 64});
  check_matches(base);
  check_matches(with_mask(base, true, Alignment::top_left));
  check_matches(with_mask(base, true, Alignment::bottom_right));
  check_matches(with_mask(base, true, Alignment::bottom_right, 12));
  Spec nolse = base;
  nolse.lse = false;
  check_matches(nolse);
  check_matches(packed({64, 64}, {0, 64})); // a sequence without keys
}

TEST_CASE("cudnn/packed: backward over ragged sequences") {
  check_backward_matches(packed({100, 37, 128}, {90, 128, 1}));
  check_backward_matches(
      with_mask(packed({100, 37, 128}, {90, 128, 64}), true, Alignment::top_left));
  check_backward_matches(
      with_mask(packed({100, 37, 128}, {100, 128, 64}), true, Alignment::bottom_right));
}

TEST_CASE("cudnn/varlen: the lengths matter (the comparison can fail)") {
  Spec a = padded({128, 50}, {128, 60}, 128, 128);
  Spec b = padded({128, 50}, {128, 61}, 128, 128);
  const auto ra = kattn::test::run_cudnn_case(a);
  const auto rb = kattn::test::run_cudnn_case(b);
  REQUIRE(ra.supported);
  REQUIRE(rb.supported);
  CHECK(kattn::test::max_abs_diff(ra.ref_out, rb.ref_out) > 10 * ra.tol_out);
}
