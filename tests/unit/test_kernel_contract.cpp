// The kernel contract (kernels/include/kattn_kernels/): the ranges every kernel derives from the
// mask rule, checked against the rule's own visible() by brute force over small random
// geometries; the sequence lengths' clamp; and the one problem -> params encoding of our GPU
// kernels (gpu_common/flash_params.cpp), which runs without a GPU.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "KokkosAttn_config.hpp"
#include "common/reference_problem.hpp"
#include "kattn_kernels/mask_rule.hpp"
#include "kattn_kernels/params_limits.hpp"
#include "kattn_kernels/seq_geometry.hpp"
#include "kokkosattn/validate.hpp"
#if KOKKOSATTN_HAS_CUDA_KERNELS || KOKKOSATTN_HAS_HIP
#include "gpu_common/flash_params.hpp"
#endif

namespace {

using I = std::int64_t;
using kattn::MaskRule;

// Random geometries with windows of every kind, both alignments and q_len > k_len cases.
std::vector<MaskRule> random_rules(unsigned seed, int count) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> len(0, 12), win(-1, 6), coin(0, 1);
  std::vector<MaskRule> rules;
  for (int c = 0; c < count; ++c)
    rules.push_back(kattn::make_mask_rule<I>(len(g), len(g), coin(g) == 1, win(g), win(g)));
  return rules;
}

} // namespace

TEST_CASE("kernel_contract/mask_rule: ranges agree with visible() (brute force, 400 rules)") {
  for (const MaskRule& r : random_rules(20261201u, 400)) {
    INFO("q_len=" << r.q_len << " k_len=" << r.k_len << " diag=" << r.diag_offset
                  << " left=" << r.window_left << " right=" << r.window_right);
    for (I i = 0; i < r.q_len + 2; ++i) { // row_keys: exactly the visible keys of a valid row
      const kattn::IndexRange<I> keys = r.row_keys(i);
      for (I j = 0; j < r.k_len + 2; ++j)
        CHECK(r.key_visible(i, j) == (j >= keys.lo && j < keys.hi));
    }
    for (I first = 0; first < r.q_len + 2; ++first)
      for (I last = first - 1; last < r.q_len + 2; ++last) {
        I lo = r.k_len, hi = 0; // visible keys of the valid rows of [first, last]
        for (I i = first; i <= last; ++i)
          for (I j = 0; j < r.k_len; ++j)
            if (r.visible(i, j))
              lo = std::min(lo, j), hi = std::max(hi, j + 1);
        const kattn::IndexRange<I> keys = r.keys_of_rows(first, last);
        if (hi <= lo) {
          CHECK(keys.hi == keys.lo);
          CHECK(keys.first_tile(64) == keys.hi); // a tile walk visits nothing
        } else {
          CHECK(keys.lo == lo);
          CHECK(keys.hi == hi);
          CHECK(keys.first_tile(64) == lo / 64 * 64);
        }
        for (I j0 = 0; j0 < r.k_len + 2; ++j0)
          for (I n : {1, 2, 4}) { // tile_needs_mask: some key of the tile hidden from some row
            bool hidden = false;
            for (I i = first; i <= last; ++i)
              for (I j = j0; j < j0 + n; ++j)
                hidden = hidden || !r.key_visible(i, j);
            if (first <= last)
              CHECK(r.tile_needs_mask(first, last, j0, n) == hidden);
          }
      }
    MaskRule unbounded = r; // window_band does not test k_len
    unbounded.k_len = std::numeric_limits<int>::max();
    for (I i = 0; i < r.q_len + 2; ++i) // window_band: the window over a register tile
      for (I j = 0; j < r.k_len + 2; ++j)
        for (I rows : {1, 4})
          for (I keys : {1, 4, 8}) {
            const kattn::IndexRange<I> band = r.window_band(i, j, -rows, keys);
            CHECK(band.lo >= -rows);
            CHECK(band.hi <= keys);
            for (I a = 0; a < rows; ++a)
              for (I e = 0; e < keys; ++e)
                CHECK(unbounded.key_visible(i + a, j + e) == (e - a >= band.lo && e - a < band.hi));
          }
    for (I first = 0; first < r.k_len + 2; ++first)
      for (I last = first - 1; last < r.k_len + 2; ++last) {
        I lo = r.q_len, hi = 0; // rows that see a key of [first, last]
        for (I i = 0; i < r.q_len; ++i)
          for (I j = first; j <= last; ++j)
            if (r.visible(i, j))
              lo = std::min(lo, i), hi = std::max(hi, i + 1);
        const kattn::IndexRange<I> rows = r.rows_of_keys(first, last);
        if (hi <= lo) {
          CHECK(rows.hi == rows.lo);
          CHECK(rows.first_tile(64) == rows.hi);
        } else {
          CHECK(rows.lo == lo);
          CHECK(rows.hi == hi);
        }
      }
  }
}

TEST_CASE("kernel_contract/mask_rule: the kernels' int form gives the int64 form's answers") {
  std::mt19937 g(7u);
  std::uniform_int_distribution<int> len(0, 12), win(-1, 6), coin(0, 1);
  for (int c = 0; c < 200; ++c) {
    const int q = len(g), k = len(g), wl = win(g), wr = win(g);
    const bool br = coin(g) == 1;
    const auto narrow = kattn::make_mask_rule<int>(q, k, br, wl, wr);
    const MaskRule wide = kattn::make_mask_rule<I>(q, k, br, wl, wr);
    for (int a = 0; a < 12; ++a)
      for (int b = a; b < 12; ++b) {
        CHECK(narrow.keys_of_rows(a, b).lo == wide.keys_of_rows(a, b).lo);
        CHECK(narrow.keys_of_rows(a, b).hi == wide.keys_of_rows(a, b).hi);
        CHECK(narrow.tile_needs_mask(a, b, 3, 4) == wide.tile_needs_mask(a, b, 3, 4));
        CHECK(narrow.window_band(a, b, -4, 8).lo == wide.window_band(a, b, -4, 8).lo);
        CHECK(narrow.window_band(a, b, -4, 8).hi == wide.window_band(a, b, -4, 8).hi);
      }
  }
}

// The test is on the row's sum of weights: 0 when every key it saw scored -inf (or it saw none);
// a row with a finite score sums at least 1; a NaN or +inf score makes the sum NaN, and that
// row is not empty (docs/semantics.md non_finite: its out and LSE come out NaN).
TEST_CASE("kernel_contract/empty_row: a row is empty when its weights sum to 0, not when NaN") {
  CHECK(kattn::row_is_empty(0.f));
  CHECK(kattn::row_is_empty(-0.f));
  CHECK_FALSE(kattn::row_is_empty(std::numeric_limits<float>::quiet_NaN()));
  CHECK_FALSE(kattn::row_is_empty(1.f));
  CHECK_FALSE(kattn::row_is_empty(std::numeric_limits<float>::infinity()));
}

TEST_CASE(
    "kernel_contract/seq_span: batched, padded, packed, lengths clamped to [0, T] and [0, S]") {
  const int cu_q_v[] = {0, 5, 12}, cu_k_v[] = {0, 3, 40};
  const int lens_q_v[] = {4, 99, -2}, lens_k_v[] = {-1, 7, 1000};
  const int *cu_q = cu_q_v, *cu_k = cu_k_v, *lens_q = lens_q_v, *lens_k = lens_k_v;
  const int* none = nullptr;
  kattn::SeqSpan<int> s = kattn::seq_span<int>(1, 10, 20, none, none, none, none);
  CHECK(s.q_len == 10);
  CHECK(s.k_len == 20);
  CHECK(s.q_tok0 == 0);
  s = kattn::seq_span<int>(0, 10, 20, none, none, lens_q, lens_k);
  CHECK(s.q_len == 4);
  CHECK(s.k_len == 0); // negative: no key
  s = kattn::seq_span<int>(1, 10, 20, none, none, lens_q, lens_k);
  CHECK(s.q_len == 10); // past T
  CHECK(s.k_len == 7);
  s = kattn::seq_span<int>(2, 10, 20, none, none, lens_q, lens_k);
  CHECK(s.q_len == 0);
  CHECK(s.k_len == 20);
  s = kattn::seq_span<int>(1, 10, 20, cu_q, cu_k, none, none);
  CHECK(s.q_tok0 == 5);
  CHECK(s.k_tok0 == 3);
  CHECK(s.q_len == 7);
  CHECK(s.k_len == 20); // 37 keys, more than max_seqlen_k = S says: clamped
}

TEST_CASE("kernel_contract/params_limits: the limits the kernel families share") {
  alignas(16) static std::uint16_t buf[64];
  kattn::FlashFwdParams p;
  p.q = p.k = p.v = p.out = buf;
  p.B = 2, p.N = 8, p.K = 2;
  p.q_row_stride = p.k_row_stride = p.v_row_stride = p.o_row_stride = 64;
  CHECK(kattn::access_limit(p, 16, 8, "16-byte loads").empty());
  CHECK(kattn::heads_limit(p).empty());
  CHECK(kattn::varlen_limit(p).empty());
  CHECK(kattn::grid_limit(p).empty());
  kattn::FlashFwdParams q = p;
  q.v = buf + 1; // 2 bytes off
  CHECK(kattn::access_limit(q, 16, 8, "16-byte loads") ==
        "v: expected a 16-byte aligned device pointer (16-byte loads)");
  CHECK(kattn::access_limit(q, 2, 1, "2-byte loads").empty());
  // Regression (2026-12-02, H200): refusing null pointers turned every support query on layout
  // copies (pointers not placed yet) into "expected a 16-byte aligned device pointer", so
  // LayoutLeft Views ran on cudnn instead of our kernels.
  q = p;
  q.q = q.out = nullptr;
  CHECK(kattn::access_limit(q, 16, 8, "16-byte loads").empty());
  q = p;
  q.k_head_stride = 12;
  CHECK(kattn::access_limit(q, 16, 8, "16-byte loads").find("multiples of 8 elements") !=
        std::string::npos);
  q = p;
  q.K = 3;
  CHECK(kattn::heads_limit(q) == "heads: expected N > 0, K > 0 and K dividing N, got N=8 K=3");
  q = p;
  const int offsets[] = {0, 4};
  q.cu_seqlens_q = offsets;
  CHECK(kattn::varlen_limit(q).find("both cu_seqlens_q and cu_seqlens_k") != std::string::npos);
  q.cu_seqlens_k = offsets;
  CHECK(kattn::varlen_limit(q).empty());
  q.seqlens_k = offsets;
  CHECK(kattn::varlen_limit(q).find("not both") != std::string::npos);
  q = p;
  q.N = q.K = 70000;
  CHECK(kattn::grid_limit(q).find("N <= 65535") != std::string::npos);
  q = p;
  q.T = 5, q.S = 7;
  CHECK(kattn::sizes_limit(q).empty());
  q.S = 0; // a zero-sized grid: refused before a launch
  CHECK(kattn::sizes_limit(q) == "sizes: expected B, N, T and S > 0, got B=2 N=8 T=5 S=0");
  // Sequence-major q, k, v (row stride 1): the families other than sm90 refuse them, and the
  // access limit checks the head-dim stride in the row stride's place.
  CHECK(kattn::unit_dim_stride_limit(p).empty());
  q = p;
  q.k_row_stride = 1;
  q.k_dim_stride = 64;
  CHECK(kattn::unit_dim_stride_limit(q).find("k: expected head-dim stride 1, got 64") == 0);
  CHECK(kattn::access_limit(q, 16, 8, "16-byte loads").empty());
  q.k_dim_stride = 66;
  CHECK(kattn::access_limit(q, 16, 8, "16-byte loads").find("got 66") != std::string::npos);
}

#if KOKKOSATTN_HAS_CUDA_KERNELS || KOKKOSATTN_HAS_HIP
namespace {

kattn::FlashParamsResult params_of(const kattn::test::Attn& a, kattn::ForwardProblem p) {
  for (kattn::Tensor* t :
       {&p.q, &p.k, &p.v, &p.out, &p.extras.lse, &p.extras.seqlens_q, &p.extras.seqlens_k})
    t->space = kattn::MemorySpace::cuda_device; // host buffers stand in (nothing is read)
  return kattn::make_flash_params(p, a.dims, kattn::MemorySpace::cuda_device, "in the test");
}

} // namespace

TEST_CASE("kernel_contract/flash_params: one encoding for the cuda and hip kernels") {
  kattn::test::Spec s;
  s.dtype = kattn::DType::bf16;
  s.B = 2, s.T = 30, s.S = 50, s.N = 4, s.K = 2, s.H = s.Hv = 64;
  s.lse = true;
  s.q_lens = {30, 7};
  s.opt.causal = true;
  s.opt.alignment = kattn::Alignment::bottom_right;
  kattn::test::Attn a(s);
  const kattn::FlashParamsResult made = params_of(a, a.forward_problem());
  REQUIRE(made.ok());
  const kattn::FlashFwdParams& f = made.params;
  CHECK(f.B == 2);
  CHECK(f.T == 30);
  CHECK(f.S == 50);
  CHECK(f.N == 4);
  CHECK(f.K == 2);
  CHECK(f.window_left == -1);
  CHECK(f.window_right == 0);
  CHECK(f.bottom_right);
  CHECK(f.q_row_stride == a.q.view.stride[1]);
  CHECK(f.lse_head_stride == a.lse.view().stride[1]);
  CHECK(f.seqlens_q != nullptr);
  CHECK(f.seqlens_k == nullptr);
  CHECK(f.cu_seqlens_q == nullptr);

  SUBCASE("sequence-major q, k, v pass with their head-dim strides; out must be row-major") {
    kattn::test::Spec q = s;
    q.q_lens.clear();
    q.seq_major = true;
    kattn::test::Attn b(q);
    const kattn::FlashParamsResult m = params_of(b, b.forward_problem());
    REQUIRE(m.ok());
    CHECK(m.params.q_row_stride == 1);
    CHECK(m.params.q_dim_stride == 30 * 4);
    CHECK(m.params.k_dim_stride == 50 * 2);
    CHECK(m.params.v_dim_stride == 50 * 2);
    // B = 1 with Kokkos LayoutLeft's batch stride 1 (never used): passed on as 0.
    kattn::test::Spec one = q;
    one.B = 1;
    kattn::test::Attn c(one);
    REQUIRE(c.q.view.stride[0] == 1);
    const kattn::FlashParamsResult m1 = params_of(c, c.forward_problem());
    REQUIRE(m1.ok());
    CHECK(m1.params.q_batch_stride == 0);
    CHECK(m1.params.k_batch_stride == 0);
    CHECK(kattn::access_limit(m1.params, 1, 2, "test").empty());
    kattn::ForwardProblem left_out = b.forward_problem();
    left_out.out = b.q.view; // sequence-major, same extents as out
    CHECK(params_of(b, left_out).reason == "out: expected head-dim stride 1, got 120");
    kattn::ForwardProblem strided = a.forward_problem();
    strided.q.stride[3] = 2; // neither row-major nor sequence-major
    CHECK(params_of(a, strided).reason ==
          "q: expected head-dim stride 1, got 2 (or, sequence-major, row stride 1)");
  }
  SUBCASE("a window reaching T + S keys cuts nothing: unbounded") {
    kattn::test::Spec w = s;
    w.opt.causal = false;
    w.opt.window_left = 79;  // T + S - 1: still cuts row 0's reach (kept)
    w.opt.window_right = 80; // T + S
    kattn::test::Attn b(w);
    CHECK(kattn::validate(b.forward_problem()).window_right == -1); // resolved by validation
    const kattn::FlashParamsResult m = params_of(b, b.forward_problem());
    REQUIRE(m.ok());
    CHECK(m.params.window_left == 79);
    CHECK(m.params.window_right == -1);
  }
  SUBCASE("strided device lengths are refused (the kernels read plain int arrays)") {
    kattn::ForwardProblem p = a.forward_problem();
    p.extras.seqlens_q.stride[0] = 2;
    const kattn::FlashParamsResult m = params_of(a, p);
    CHECK(m.reason == "extras.seqlens_q: expected a contiguous tensor, got stride 2");
  }
  SUBCASE("f32 and f64 pass as their element types, the scale in double beside the float") {
    for (kattn::DType t : {kattn::DType::f32, kattn::DType::f64}) {
      kattn::test::Spec w = s;
      w.dtype = t;
      w.opt.scale = 0.1;
      w.opt.softcap = 3.0;
      kattn::test::Attn b(w);
      const kattn::FlashParamsResult m = params_of(b, b.forward_problem());
      REQUIRE(m.ok());
      CHECK(m.params.dtype ==
            (t == kattn::DType::f32 ? kattn::ElemType::f32 : kattn::ElemType::f64));
      CHECK(m.params.scale_f64 == 0.1);
      CHECK(m.params.scale == 0.1f);
      CHECK(m.params.softcap_f64 == 3.0);
      // Which families take them is theirs to say (params_limits.hpp's half_dtype_limit).
      CHECK(kattn::half_dtype_limit(m.params, "x") ==
            std::string("dtype: expected bf16 or f16 (x), got ") +
                kattn::elem_name(m.params.dtype));
    }
  }
  SUBCASE("q, k, v, out share one dtype") {
    kattn::ForwardProblem p = a.forward_problem();
    p.v.dtype = kattn::DType::f16;
    CHECK(params_of(a, p).reason == "v: expected the dtype of q (bf16), got f16");
  }
  SUBCASE("T + S beyond the kernels' 32-bit index arithmetic is refused") {
    kattn::Dims d = a.dims;
    d.T = std::int64_t{1} << 29;
    d.S = std::int64_t{1} << 29;
    kattn::ForwardProblem p = a.forward_problem();
    for (kattn::Tensor* t : {&p.q, &p.k, &p.v, &p.out, &p.extras.lse, &p.extras.seqlens_q})
      t->space = kattn::MemorySpace::cuda_device;
    const kattn::FlashParamsResult m =
        kattn::make_flash_params(p, d, kattn::MemorySpace::cuda_device, "in the test");
    CHECK(m.reason.find("sizes: expected T + S <= 1073741823") == 0);
  }
}
#endif
