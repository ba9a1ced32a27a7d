// The cuda backend's sm90 family (wgmma + TMA, cuda/sm90/) forced, on a compute capability 9.0
// GPU, against the f64 reference (tolerances: test_cuda_case.hpp). The same option matrix as
// test_cuda_forward.cpp (sm80) for the head dims sm90 serves (64, 128, 256). Head dim 256 has its
// own tile shape (key block 80, so S = 203 or 777 ends inside a block) and register budget, so it
// runs the whole matrix too; the reference is a single-threaded f64 loop, so its shapes stay small
// except one 1000 x 777 case.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <random>
#include <utility>

#include "gpu/on_sm90.hpp"
#include "gpu/test_cuda_case.hpp"

namespace {

using kattn::Alignment;
using kattn::DType;
using kattn::test::causal;
using kattn::test::cuda_matches;
using kattn::test::Spec;

using kattn::test::on_sm90;

#define KATTN_REQUIRE_SM90()                                                                       \
  if (!on_sm90()) {                                                                                \
    MESSAGE("not a compute capability 9.0 GPU: sm90 kernels not run");                             \
    return;                                                                                        \
  }

Spec make(DType t, std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K,
          std::int64_t H) {
  return kattn::test::cuda_spec(t, B, T, S, N, K, H, 90);
}

using TS = std::pair<std::int64_t, std::int64_t>;
constexpr const char* sm90 = "sm90";

} // namespace

TEST_CASE("cuda/sm90/shapes: non-tile-multiple (T, S), bf16 and f16, head dims 64/128/256") {
  KATTN_REQUIRE_SM90();
  for (DType t : {DType::bf16, DType::f16}) {
    for (std::int64_t H : {64, 128})
      for (auto [T, S] : {TS{1, 1}, TS{239, 1}, TS{799, 3}, TS{113, 203}, TS{1023, 1024}})
        cuda_matches(make(t, 2, T, S, 2, 2, H), sm90);
    for (auto [T, S] : {TS{1, 1}, TS{239, 1}, TS{799, 3}, TS{113, 203}, TS{160, 80}})
      cuda_matches(make(t, 2, T, S, 2, 2, 256), sm90);
  }
}

TEST_CASE("cuda/sm90/h256_long: 1000 x 777 (8 query tiles, 10 key blocks, the last partial)") {
  KATTN_REQUIRE_SM90();
  Spec o = make(DType::bf16, 1, 1000, 777, 2, 1, 256);
  o.outliers = true; // BRIEF's rare large inputs: a few rows' maxima jump between key blocks
  cuda_matches(o, sm90);
  cuda_matches(causal(make(DType::f16, 1, 1000, 777, 2, 1, 256), Alignment::bottom_right), sm90);
  cuda_matches(causal(make(DType::bf16, 1, 777, 1000, 1, 1, 256), Alignment::top_left), sm90);
}

TEST_CASE("cuda/sm90/max_growth: row maxima that grow by more than 2^8 between key blocks") {
  // Scaled inputs (score spread ~15, ~22 in log2 units): a row's running max often grows by more
  // than the 8 log2 units up to which head dim 256 keeps it without rescaling O (.lazy_rescale),
  // in many blocks of a long row; the 192-key configuration stores its rows in two halves
  // (.split_last_pv): 4096 keys with the narrow last block, 4500 without it.
  KATTN_REQUIRE_SM90();
  Spec h256 = make(DType::bf16, 1, 200, 777, 2, 1, 256);
  h256.q_mult = 5.0, h256.k_mult = 3.0;
  cuda_matches(h256, sm90);
  h256.dtype = DType::f16;
  h256.outliers = true;
  cuda_matches(causal(h256, Alignment::bottom_right), sm90);
  Spec h128 = make(DType::bf16, 1, 130, 4096, 2, 1, 128);
  h128.q_mult = 5.0, h128.k_mult = 3.0;
  CHECK(cuda_matches(h128, sm90).kernel == "sm90_fwd_bf16_h128_n192_tail64");
  h128.S = 4500;
  h128.dtype = DType::f16;
  CHECK(cuda_matches(h128, sm90).kernel == "sm90_fwd_f16_h128_n192_tail64");
  h128.out_pad = 2; // heads not 16-byte aligned: the halves take the 4-byte stores
  CHECK(cuda_matches(h128, sm90).kernel == "sm90_fwd_f16_h128_n192_tail64");
}

TEST_CASE("cuda/sm90/persistent: more work items than SMs (CTAs run several tiles in turn)") {
  KATTN_REQUIRE_SM90();
  // Paired configurations schedule pairs of query blocks (p, M - 1 - p) of one (batch, head):
  // head dim 256 18 x 8 = 144 pairs with M = 2, 17 x 8 = 136 causal, 2 x 9 x 8 = 144 with M = 3
  // (an odd block count: the middle block runs alone); head dim 128 (128-row tiles) and head dim
  // 64 causal with few keys (128-row tiles) 2 x 9 x 8 = 144 with M = 4. Head dim 64's 192-row
  // configuration schedules single tiles: 3 x 6 x 8 = 144. Each is more than the 132 SMs of an
  // H100/H200, so CTAs take a second item and the ring and Q buffers carry over.
  cuda_matches(make(DType::bf16, 18, 129, 81, 8, 2, 256), sm90);
  cuda_matches(causal(make(DType::bf16, 17, 129, 100, 8, 4, 256), Alignment::top_left), sm90);
  cuda_matches(make(DType::f16, 9, 300, 40, 8, 2, 256), sm90);
  cuda_matches(causal(make(DType::f16, 9, 300, 70, 8, 8, 256), Alignment::bottom_right), sm90);
  cuda_matches(make(DType::bf16, 9, 400, 40, 8, 2, 128), sm90);
  cuda_matches(causal(make(DType::bf16, 9, 400, 30, 8, 8, 64), Alignment::bottom_right), sm90);
  cuda_matches(make(DType::f16, 6, 400, 50, 8, 8, 64), sm90);
}

TEST_CASE("cuda/sm90/tile_configs: each head dim 64/128 configuration, at its boundaries") {
  // tile_choice.hpp: head dim 128 switches to the 192-key-block configuration at 4096 keys
  // (the batch maximum; it runs a narrow last block per tile where that block holds at most 64
  // keys); head dim 64 to 128-row tiles for causal masks up to 1024 keys.
  KATTN_REQUIRE_SM90();
  const auto named = [](const Spec& s, const std::string& tile) {
    const auto r = cuda_matches(s, sm90);
    const std::string want =
        std::string("sm90_fwd_") + (s.dtype == DType::bf16 ? "bf16_" : "f16_") + tile;
    CHECK(r.kernel == want);
  };
  named(make(DType::bf16, 1, 64, 4095, 2, 1, 128), "h128_paired_q2");
  named(make(DType::bf16, 1, 64, 4096, 2, 1, 128), "h128_n192_tail64"); // 21 x 192 + 64
  named(make(DType::bf16, 1, 64, 4097, 2, 1, 128), "h128_n192_tail64"); // last block 65 keys
  named(make(DType::f16, 2, 130, 12160, 2, 1, 128), "h128_n192_tail64");
  named(make(DType::bf16, 1, 64, 12352, 2, 1, 128), "h128_n192_tail64");
  named(causal(make(DType::bf16, 1, 1000, 4096, 2, 1, 128), Alignment::bottom_right),
        "h128_n192_tail64");
  named(make(DType::bf16, 1, 300, 4500, 2, 1, 128), "h128_n192_tail64");
  named(causal(make(DType::f16, 1, 4160, 4160, 1, 1, 128), Alignment::top_left),
        "h128_n192_tail64");
  Spec w = make(DType::bf16, 1, 700, 4200, 2, 2, 128);
  w.opt.window_left = 300;
  w.opt.window_right = 20;
  w.opt.alignment = Alignment::bottom_right;
  named(w, "h128_n192_tail64");
  Spec v = make(DType::f16, 2, 200, 5000, 2, 2, 128); // padded: one batch past 4096 keys
  v.q_lens = {200, 57};
  v.k_lens = {4097, 5000};
  named(causal(v, Alignment::bottom_right), "h128_n192_tail64"); // 5000 = 26 x 192 + 8
  v.S = 5100;
  v.k_lens = {4097, 5100};
  named(causal(v, Alignment::bottom_right), "h128_n192_tail64");
  named(causal(make(DType::bf16, 2, 1024, 1024, 2, 2, 64), Alignment::top_left), "h64_m128_paired");
  named(causal(make(DType::f16, 2, 900, 1025, 2, 1, 64), Alignment::bottom_right), "h64_m192");
  named(make(DType::bf16, 2, 512, 512, 2, 2, 64), "h64_m192");
}

TEST_CASE("cuda/sm90/causal: both alignments, T < S, T > S (fully masked rows), decode") {
  KATTN_REQUIRE_SM90();
  for (Alignment a : {Alignment::top_left, Alignment::bottom_right})
    for (std::int64_t H : {64, 128, 256}) {
      cuda_matches(causal(make(DType::bf16, 2, 128, 128, 2, 2, H), a), sm90);
      cuda_matches(causal(make(DType::bf16, 2, 113, 203, 2, 2, H), a), sm90);
      cuda_matches(causal(make(DType::f16, 2, 203, 113, 2, 2, H), a), sm90);
      cuda_matches(causal(make(DType::bf16, 2, 1, 300, 2, 2, H), a), sm90);
    }
}

TEST_CASE("cuda/sm90/window: inclusive (left, right) windows, both alignments") {
  KATTN_REQUIRE_SM90();
  const std::pair<std::int64_t, std::int64_t> windows[] = {{1, 0},  {16, 0},  {5, 7},
                                                           {-1, 3}, {10, -1}, {100, 70}};
  for (Alignment a : {Alignment::top_left, Alignment::bottom_right})
    for (auto [L, R] : windows)
      for (auto [T, S] : {TS{128, 128}, TS{97, 301}, TS{301, 97}}) {
        Spec s = make(DType::bf16, 2, T, S, 2, 2, 128);
        s.opt.window_left = L;
        s.opt.window_right = R;
        s.opt.alignment = a;
        cuda_matches(s, sm90);
      }
  // Head dim 256 (key block 80): a subset, windows narrower and wider than one key block.
  for (Alignment a : {Alignment::top_left, Alignment::bottom_right})
    for (auto [L, R] : {std::pair<std::int64_t, std::int64_t>{16, 0}, {5, 7}, {100, 70}})
      for (auto [T, S] : {TS{97, 301}, TS{301, 97}}) {
        Spec s = make(DType::f16, 1, T, S, 2, 2, 256);
        s.opt.window_left = L;
        s.opt.window_right = R;
        s.opt.alignment = a;
        cuda_matches(s, sm90);
      }
}

TEST_CASE("cuda/sm90/gqa: grouped and multi-query attention") {
  KATTN_REQUIRE_SM90();
  cuda_matches(make(DType::bf16, 2, 113, 203, 8, 2, 64), sm90);
  cuda_matches(make(DType::bf16, 2, 113, 203, 8, 1, 128), sm90);
  cuda_matches(causal(make(DType::f16, 2, 128, 128, 8, 2, 64), Alignment::bottom_right), sm90);
  cuda_matches(make(DType::bf16, 1, 113, 203, 8, 2, 256), sm90);
  cuda_matches(causal(make(DType::f16, 1, 130, 170, 4, 1, 256), Alignment::bottom_right), sm90);
}

TEST_CASE("cuda/sm90/varlen: padded and packed sequences") {
  KATTN_REQUIRE_SM90();
  for (std::int64_t H : {64, 128, 256}) {
    Spec s = make(DType::bf16, 4, 200, 260, 2, 1, H);
    s.q_lens = {200, 1, 77, 130};
    s.k_lens = {13, 260, 77, 200};
    cuda_matches(s, sm90);
    cuda_matches(causal(s, Alignment::bottom_right), sm90);
    Spec p = make(DType::bf16, 0, 0, 0, 4, 2, H);
    p.packed = true;
    p.q_lens = {1, 130, 64, 257};
    p.k_lens = {50, 130, 200, 257};
    cuda_matches(p, sm90);
    cuda_matches(causal(p, Alignment::top_left), sm90);
  }
  std::mt19937 rng(90);
  std::uniform_int_distribution<std::int64_t> len(1, 300);
  Spec r = make(DType::f16, 0, 0, 0, 2, 1, 64);
  r.packed = true;
  for (int b = 0; b < 7; ++b) {
    r.q_lens.push_back(len(rng));
    r.k_lens.push_back(len(rng));
  }
  cuda_matches(causal(r, Alignment::bottom_right), sm90);
}

TEST_CASE("cuda/sm90/softcap: c * tanh(s / c) before the mask") {
  KATTN_REQUIRE_SM90();
  for (std::int64_t H : {64, 128, 256}) {
    Spec s = make(DType::bf16, 2, 113, 203, 2, 2, H);
    s.opt.softcap = 5.0;
    s.q_mult = 4.0; // large logits, so the cap matters
    cuda_matches(s, sm90);
    cuda_matches(causal(s, Alignment::bottom_right), sm90);
  }
}

TEST_CASE("cuda/sm90/out_strides: output heads not 16-byte aligned (the 4-byte store path)") {
  KATTN_REQUIRE_SM90();
  // Head stride Hv + 2 elements: the epilogue stores 16 bytes per lane only when out and its
  // strides are multiples of 8 elements, so these outputs take the 4-byte stores (every other
  // case here takes the 16-byte ones).
  for (std::int64_t H : {64, 128, 256}) {
    Spec s = make(DType::bf16, 2, 113, 203, 2, 2, H);
    s.out_pad = 2;
    cuda_matches(s, sm90);
    cuda_matches(causal(s, Alignment::bottom_right), sm90);
  }
  Spec f = make(DType::f16, 1, 300, 300, 3, 1, 128);
  f.out_pad = 6;
  cuda_matches(f, sm90);
}

TEST_CASE("cuda/sm90/seq_major: q, k, v with the token dimension contiguous (B = 1 LayoutLeft)") {
  // The _seq tiles read Q and K MN-major and V K-major (fwd_config.cuh). Shapes: a partial last
  // query tile and key block (200 x 328), each head dim 64/128 configuration (causal up to 1024
  // keys, 4104 keys: 192-key blocks with a narrow last block of 8), GQA, a window, softcap, B = 2
  // (a batch stride). Token counts keep T * N and S * K multiples of 8 (TMA strides).
  KATTN_REQUIRE_SM90();
  for (DType t : {DType::bf16, DType::f16})
    for (std::int64_t H : {64, 128}) {
      Spec s = make(t, 1, 200, 328, 2, 1, H);
      s.seq_major = true;
      const auto r = cuda_matches(s, sm90);
      CHECK(r.kernel.ends_with("_seq"));
      cuda_matches(causal(s, Alignment::top_left), sm90);
      cuda_matches(causal(s, Alignment::bottom_right), sm90);
      Spec g = make(t, 2, 136, 1000, 4, 2, H);
      g.seq_major = true;
      g.opt.window_left = 100;
      g.opt.window_right = 30;
      cuda_matches(g, sm90);
      Spec c = make(t, 1, 64, 1000, 2, 2, H);
      c.seq_major = true;
      c.opt.softcap = 5.0;
      c.q_mult = 4.0;
      cuda_matches(causal(c, Alignment::bottom_right), sm90);
    }
  for (DType t : {DType::bf16, DType::f16}) {
    Spec l = make(t, 1, 136, 4104, 2, 1, 128);
    l.seq_major = true;
    const auto r = cuda_matches(l, sm90);
    CHECK(r.kernel.find("h128_n192_tail64_seq") != std::string::npos);
    cuda_matches(causal(l, Alignment::bottom_right), sm90);
  }
  // Refused with the reason (the front end then copies every tensor): head dim 256, a TMA
  // stride that is not a multiple of 8 (T * N = 202), padded lengths.
  Spec h256 = make(DType::bf16, 1, 200, 328, 2, 1, 256);
  h256.seq_major = true;
  CHECK(kattn::test::run_cuda_case(h256, sm90).reason.find("head dims 64 and 128") !=
        std::string::npos);
  Spec odd = make(DType::bf16, 1, 101, 328, 2, 1, 128);
  odd.seq_major = true;
  CHECK(!kattn::test::run_cuda_case(odd, sm90).supported);
  Spec pad = make(DType::bf16, 2, 200, 328, 2, 1, 128);
  pad.seq_major = true;
  pad.k_lens = {328, 17};
  CHECK(kattn::test::run_cuda_case(pad, sm90).reason.find("without padded or packed") !=
        std::string::npos);
}

TEST_CASE("cuda/sm90/sanitizer_smoke: every sm90 instantiation once on a tiny ragged problem") {
  // Small enough for compute-sanitizer memcheck: padded rows and keys (V padding zeroed in
  // shared memory), a partial key block, a causal band, softcap, and a packed batch whose last
  // tile ends inside the tensor (TMA rows past the total are zero-filled).
  KATTN_REQUIRE_SM90();
  for (DType t : {DType::bf16, DType::f16})
    for (std::int64_t H : {64, 128, 256})
      for (const Spec& s : kattn::test::ragged_smoke_specs(t, H, 90))
        cuda_matches(s, sm90);
  // The configurations the cases above do not reach (tile_choice.hpp): head dim 64 without a
  // causal mask (192-row tiles), head dim 128 with 4096 keys or more (192-key blocks), and its
  // narrow-tail variant (4096 keys: the last block of batch 0 holds 64).
  for (DType t : {DType::bf16, DType::f16}) {
    // Sequence-major tiles (no padding there): 70 x 90 keys of head dim 64 (192 rows, and
    // causal: the short-causal tile), head dim 128 below and from 4096 keys.
    Spec q = make(t, 1, 72, 96, 2, 1, 64);
    q.seq_major = true;
    cuda_matches(q, sm90);
    cuda_matches(causal(q, Alignment::bottom_right), sm90);
    q.H = q.Hv = 128;
    cuda_matches(q, sm90);
    Spec ql = make(t, 1, 8, 4160, 1, 1, 128);
    ql.seq_major = true;
    cuda_matches(ql, sm90);
    Spec s = make(t, 2, 70, 90, 2, 1, 64);
    s.q_lens = {70, 33};
    s.k_lens = {90, 17};
    cuda_matches(s, sm90);
    Spec l = make(t, 2, 9, 4200, 2, 1, 128);
    l.q_lens = {9, 4};
    l.k_lens = {4200, 100};
    cuda_matches(causal(l, Alignment::bottom_right), sm90);
    Spec n = make(t, 2, 9, 4096, 2, 1, 128);
    n.q_lens = {9, 4};
    n.k_lens = {4096, 100};
    cuda_matches(n, sm90);
  }
}
