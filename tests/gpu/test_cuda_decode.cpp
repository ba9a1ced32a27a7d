// The cuda backend's split-KV decode kernel (cuda/decode/) on a real GPU against the f64
// reference (tolerances: test_cuda_case.hpp; the kernel rounds P to the input dtype before
// P V like the flash kernels, and a split run merges fp32 partial rows, well inside 2u max|v|):
// contiguous and paged caches, GQA packing, several new tokens, splits, masks, bad page ids.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/paged_cache.hpp"
#include "gpu/test_cuda_case.hpp"
#include "kattn_cuda/flash_fwd.hpp"

namespace {

using kattn::Alignment;
using kattn::DType;
using kattn::ForwardProblem;
using kattn::test::cuda_matches;
using kattn::test::CudaResult;
using kattn::test::DeviceCopy;
using kattn::test::PagedLayout;
using kattn::test::run_cuda_case;
using kattn::test::Spec;

Spec decode_spec(DType t, std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N,
                 std::int64_t K, std::int64_t H) {
  Spec s = kattn::test::cuda_spec(t, B, T, S, N, K, H, 0xdec0de);
  s.opt.causal = true; // bottom-right: the decode default (T = 1 masks nothing)
  s.opt.alignment = Alignment::bottom_right;
  return s;
}

// spec's k and v through a paged cache built from the same inputs run_cuda_case draws (an Attn
// of the same spec); `corrupt` may change the device page table's host copy before the run
// (then uploaded: what host validation cannot see).
using Corrupt = std::function<void(kattn::test::PagedCache&)>;
CudaResult run_paged(const Spec& spec, const PagedLayout& layout, const char* family = "decode",
                     const Corrupt& corrupt = {}) {
  Spec with = spec;
  with.opt.backend = kattn::Backend::cuda;
  kattn::test::Attn a(with);
  kattn::test::PagedCache cache = kattn::test::make_paged(a, layout);
  if (corrupt)
    corrupt(cache);
  DeviceCopy k(cache.k.view()), v(cache.v.view()), table(cache.page_table.view());
  return run_cuda_case(spec, family, nullptr, [&](ForwardProblem& p) {
    p.k = k.view();
    p.v = v.view();
    p.extras.page_table = table.view();
  });
}

void paged_matches(const Spec& spec, const PagedLayout& layout, const char* family = "decode") {
  const CudaResult r = run_paged(spec, layout, family);
  INFO(kattn::test::cuda_spec_string(spec), " page size ", layout.page_size);
  INFO("reason: " << r.reason);
  REQUIRE(r.supported);
  CHECK(r.kernel.rfind("decode_", 0) == 0);
  CHECK(r.out_finite);
  CHECK(r.err_out <= r.tol_out);
  if (spec.lse)
    CHECK(r.err_lse <= r.tol_lse);
}

bool has_splits(const std::string& kernel) {
  const auto at = kernel.find("_splits");
  return at != std::string::npos && kernel.substr(at) != "_splits1";
}

} // namespace

TEST_CASE("cuda/decode: one new token, GQA/MQA/MHA packing, head dims 64/128/256") {
  for (DType t : {DType::bf16, DType::f16})
    for (std::int64_t H : {64, 128, 256}) {
      cuda_matches(decode_spec(t, 2, 1, 77, 8, 2, H), "decode");  // g = 4
      cuda_matches(decode_spec(t, 3, 1, 300, 4, 4, H), "decode"); // MHA
      cuda_matches(decode_spec(t, 1, 1, 1, 8, 1, H), "decode");   // one key
    }
  cuda_matches(decode_spec(DType::bf16, 2, 1, 1000, 32, 1, 128), "decode"); // g = 32: 2 row blocks
}

TEST_CASE("cuda/decode: several new tokens (speculative), both alignments, windows, softcap") {
  for (std::int64_t H : {64, 128}) {
    cuda_matches(decode_spec(DType::bf16, 2, 4, 130, 8, 2, H), "decode"); // 16 packed rows
    cuda_matches(decode_spec(DType::f16, 2, 3, 70, 16, 2, H), "decode");  // 24 rows, 2 blocks
    Spec tl = decode_spec(DType::bf16, 1, 5, 90, 4, 1, H);
    tl.opt.alignment = Alignment::top_left;
    cuda_matches(tl, "decode");
    Spec w = decode_spec(DType::bf16, 2, 4, 333, 6, 3, H);
    w.opt.causal = false;
    w.opt.window_left = 70;
    w.opt.window_right = 2;
    cuda_matches(w, "decode");
    Spec c = decode_spec(DType::f16, 2, 2, 200, 4, 2, H);
    c.opt.softcap = 8.0;
    cuda_matches(c, "decode");
  }
  Spec big = decode_spec(DType::bf16, 1, 16, 300, 4, 1, 128); // T > S after padding below
  big.k_lens = {9};
  cuda_matches(big, "decode"); // rows that see no key: 0 and -inf
}

TEST_CASE("cuda/decode: padded lengths, rows past q_len give 0 and -inf") {
  Spec s = decode_spec(DType::bf16, 3, 4, 250, 8, 2, 128);
  s.q_lens = {4, 1, 0};
  s.k_lens = {250, 31, 0};
  const CudaResult r = cuda_matches(s, "decode");
  for (std::int64_t n = 0; n < s.N; ++n)
    CHECK(r.lse[static_cast<std::size_t>((1 * s.N + n) * s.T + 2)] == -INFINITY);
}

TEST_CASE("cuda/decode: long caches split the keys and merge exactly") {
  for (DType t : {DType::bf16, DType::f16})
    for (std::int64_t H : {64, 128, 256}) {
      Spec s = decode_spec(t, 1, 1, 8192, 8, 1, H);
      const CudaResult r = cuda_matches(s, "decode");
      INFO(r.kernel);
      CHECK(has_splits(r.kernel));
    }
  Spec ragged = decode_spec(DType::bf16, 2, 4, 6000, 8, 2, 128);
  ragged.k_lens = {6000, 65}; // sequence 1: most splits empty
  ragged.opt.softcap = 20.0;
  CHECK(has_splits(cuda_matches(ragged, "decode").kernel));
}

TEST_CASE("cuda/decode: auto takes the decode kernel for few query rows only, once verified") {
  // Until kDecodeVerified, auto keeps the flash families (and refuses a paged cache: below).
  const CudaResult d = run_cuda_case(decode_spec(DType::bf16, 2, 1, 500, 8, 2, 128), nullptr);
  CHECK(d.supported);
  CHECK(d.err_out <= d.tol_out);
  CHECK((d.kernel.rfind("decode_", 0) == 0) == kattn::cuda_kernels::kDecodeVerified);
  Spec prefill = decode_spec(DType::bf16, 1, 300, 300, 2, 2, 128);
  const CudaResult f = run_cuda_case(prefill, nullptr);
  CHECK(f.supported);
  CHECK(f.kernel.rfind("decode_", 0) != 0);
}

TEST_CASE("cuda/decode: paged KV caches, page sizes 1 to 256, shuffled among NaN pages") {
  for (DType t : {DType::bf16, DType::f16})
    for (std::int64_t H : {64, 128, 256}) {
      Spec s = decode_spec(t, 3, 1, 512, 8, 2, H);
      s.k_lens = {512, 77, 1};
      for (std::int64_t ps : {16, 256})
        paged_matches(s, {ps, 3, 0, 7});
    }
  Spec odd = decode_spec(DType::bf16, 2, 4, 96, 4, 1, 128);
  odd.k_lens = {96, 50};
  for (std::int64_t ps : {1, 3, 32})
    paged_matches(odd, {ps, 5, 0, 9});
  Spec split = decode_spec(DType::bf16, 2, 1, 8192, 8, 1, 128); // split across pages
  split.k_lens = {8192, 4000};
  split.opt.softcap = 30.0;
  const CudaResult r = run_paged(split, {16, 2, 0, 4});
  CHECK(has_splits(r.kernel));
  CHECK(r.err_out <= r.tol_out);
  Spec prefill = decode_spec(DType::f16, 1, 100, 128, 2, 2, 64); // any T: correct, not fast
  prefill.k_lens = {128};
  paged_matches(prefill, {64, 1, 0, 2});
  const CudaResult a = run_paged(prefill, {64, 1, 0, 2}, nullptr); // auto
  CHECK(a.supported == kattn::cuda_kernels::kDecodeVerified);
  if (!a.supported)
    CHECK(a.reason.find("opt-in (KOKKOSATTN_CUDA_KERNEL=decode)") != std::string::npos);
}

TEST_CASE("cuda/decode: a bad page id makes exactly the rows that see it NaN") {
  Spec s = decode_spec(DType::bf16, 2, 4, 64, 4, 2, 128);
  s.k_lens = {64, 64};
  // Sequence 1's last page (keys 48-63) names a page past the cache: with T = 4 bottom-right,
  // query t sees keys < 61 + t, so all of its rows see it; sequence 0 is untouched.
  const CudaResult r = run_paged(s, {16, 1, 0, 5}, "decode", [](kattn::test::PagedCache& c) {
    c.page_table.set_int(1 * 4 + 3, c.num_pages + 7);
  });
  REQUIRE(r.supported);
  const std::size_t per_seq = static_cast<std::size_t>(s.T * s.N * s.Hv);
  for (std::size_t i = 0; i < per_seq; ++i) {
    CHECK(std::abs(r.out[i] - r.ref_out[i]) <= r.tol_out);
    CHECK(std::isnan(r.out[per_seq + i]));
  }
}

TEST_CASE("cuda/decode: the flash families refuse a paged cache, forced or not") {
  Spec s = decode_spec(DType::bf16, 1, 1, 32, 2, 2, 64);
  s.k_lens = {32};
  for (const char* family : {"sm80", "sm90"}) {
    const CudaResult r = run_paged(s, {16, 0, 0, 1}, family);
    CHECK_FALSE(r.supported);
    CHECK(r.reason.find("the decode kernel serves it") != std::string::npos);
    CHECK(r.out_all_nan); // nothing written
  }
}

TEST_CASE("cuda/sanitizer_smoke_decode: every decode instantiation, split and paged") {
  // Small for compute-sanitizer: padded rows, a tail tile, a split run and a paged cache.
  for (DType t : {DType::bf16, DType::f16})
    for (std::int64_t H : {64, 128, 256}) {
      Spec s = decode_spec(t, 2, 3, 700, 8, 2, H);
      s.k_lens = {700, 45};
      s.q_lens = {3, 2};
      cuda_matches(s, "decode");
      Spec p = decode_spec(t, 2, 1, 48, 4, 1, H);
      p.k_lens = {48, 20};
      paged_matches(p, {16, 2, 0, 3});
    }
}
