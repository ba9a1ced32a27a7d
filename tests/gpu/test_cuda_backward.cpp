// The cuda backend's backward on a real GPU against the f64 reference gradients, every runtime
// option the cuda forward serves, once per kernel family the device runs: sm90 (wgmma, TMA) on
// compute capability 9.0, and sm80 (mma.sync) everywhere, which cross-checks sm90 on the H200.
// Each family is forced (KOKKOSATTN_CUDA_KERNEL), so a refusal fails instead of falling back;
// the forward that makes out and LSE is the cuda backend's too. Tolerances: backward_case.hpp.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu/backward_case.hpp"
#include "gpu/on_sm90.hpp"
#include "gpu/test_cuda_case.hpp"

namespace {

using kattn::Alignment;
using kattn::Backend;
using kattn::DType;
using kattn::test::on_sm90;
using kattn::test::Spec;

Spec bwd(DType t, std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K,
         std::int64_t H) {
  Spec s;
  s.dtype = t;
  s.B = B, s.T = T, s.S = S, s.N = N, s.K = K, s.H = H, s.Hv = H;
  s.seed = static_cast<std::uint64_t>(T * 19 + S * 5 + H + N + 3);
  return s;
}

Spec varlen(std::vector<std::int64_t> q_lens, std::vector<std::int64_t> k_lens, std::int64_t T,
            std::int64_t S, bool packed, std::int64_t H = 64) {
  Spec s = bwd(DType::bf16, static_cast<std::int64_t>(q_lens.size()), T, S, 4, 2, H);
  s.q_lens = std::move(q_lens);
  s.k_lens = std::move(k_lens);
  s.packed = packed;
  return s;
}

std::vector<const char*> families() {
  const bool sm90 = on_sm90();
  if (!sm90)
    MESSAGE("not a compute capability 9.0 GPU: the sm90 backward is not run");
  return sm90 ? std::vector<const char*>{"sm90", "sm80"} : std::vector<const char*>{"sm80"};
}

// Every family of this device, forced.
void check(const Spec& s) {
  for (const char* family : families()) {
    const std::string forced = family; // doctest prints a const char* as its address
    CAPTURE(forced);
    const kattn::test::ScopedEnv force("KOKKOSATTN_CUDA_KERNEL", family);
    kattn::test::check_backward_matches(s, false, {}, Backend::cuda);
  }
}

// What auto picks.
void check_auto(const Spec& s) {
  kattn::test::check_backward_matches(s, false, {}, Backend::cuda);
}

} // namespace

TEST_CASE("cuda/backward: dq, dk, dv match the reference (bf16, f16; head dims 64, 128)") {
  for (DType t : {DType::bf16, DType::f16}) {
    check(bwd(t, 2, 128, 128, 2, 2, 64));
    check(bwd(t, 2, 113, 203, 2, 2, 128)); // lengths off the tiles, T != S
    check(bwd(t, 1, 1, 70, 3, 3, 64));     // T = 1
  }
  check(bwd(DType::bf16, 1, 1000, 1000, 2, 2, 128)); // many query blocks per key block
}

TEST_CASE("cuda/backward: causal in both alignments, windows, T > S, GQA and MQA, softcap") {
  Spec c = bwd(DType::bf16, 2, 113, 203, 4, 2, 64);
  c.opt.causal = true;
  check(c);
  c.opt.alignment = Alignment::bottom_right;
  check(c);
  Spec over = bwd(DType::bf16, 2, 203, 113, 4, 2, 128); // T > S bottom-right: rows without keys
  over.opt.causal = true;
  over.opt.alignment = Alignment::bottom_right;
  check(over);
  Spec w = bwd(DType::bf16, 2, 200, 200, 2, 2, 64);
  w.opt.window_left = 7;
  w.opt.window_right = 3;
  check(w);
  check(bwd(DType::bf16, 2, 97, 160, 8, 1, 64)); // MQA
  check(bwd(DType::f16, 2, 130, 90, 6, 2, 128)); // GQA 3 query heads per KV head
  Spec cap = bwd(DType::bf16, 2, 150, 150, 2, 2, 64);
  cap.opt.softcap = 5.0;
  cap.opt.causal = true;
  check(cap);
}

TEST_CASE("cuda/backward: padded and packed varlen, with empty sequences and rows without keys") {
  check(varlen({128, 77, 1}, {128, 50, 113}, 128, 128, false));
  check(varlen({64, 64, 64}, {64, 0, 20}, 64, 64, false)); // k_len = 0: dq rows 0
  Spec c = varlen({100, 3, 64}, {90, 200, 10}, 100, 200, false);
  c.opt.causal = true;
  c.opt.alignment = Alignment::bottom_right;
  check(c);
  check(varlen({100, 37, 128}, {90, 128, 1}, 0, 0, true));
  Spec p = varlen({0, 70, 130, 5}, {40, 0, 150, 5}, 0, 0, true); // empty sequences
  p.opt.causal = true;
  check(p);
}

// Deterministic mode, both families forced: 100 runs bitwise equal and within the reference's
// tolerance. sm90 orders its dQ additions per query tile (kattn_kernels/bwd_geometry.hpp,
// dq_order_ticket): ascending key blocks without a right-bounded window, descending under a
// causal mask or window; many key blocks per tile (T, S of several 128-key blocks) so that the
// order matters, head dim 64 (both warpgroups' dQ summed in shared memory first) and 128, GQA,
// packed varlen with empty sequences.
// KATTN_TEST_REPEATS caps the runs (compute-sanitizer passes use 2).
void check_repeatable(const Spec& s, int runs = 100) {
  if (const char* cap = std::getenv("KATTN_TEST_REPEATS"))
    runs = std::min(runs, std::max(2, std::atoi(cap)));
  for (const char* family : families()) {
    const std::string forced = family;
    CAPTURE(forced);
    const kattn::test::ScopedEnv force("KOKKOSATTN_CUDA_KERNEL", family);
    const auto r = kattn::test::run_backward_case(Backend::cuda, s, runs);
    REQUIRE(r.supported);
    for (int i = 0; i < 3; ++i) {
      CHECK_FALSE(r.bits[i].empty()); // emptied when one of the runs differed
      CHECK(r.err[i] <= r.tol[i]);
    }
    CHECK(r.finite);
  }
}

TEST_CASE("cuda/backward: deterministic mode matches the reference and is bitwise repeatable") {
  Spec s = bwd(DType::bf16, 2, 300, 260, 4, 2, 64); // GQA: dk, dv summed over 2 query heads
  s.opt.deterministic = true;
  check_repeatable(s);
  Spec wide = bwd(DType::bf16, 1, 1100, 1100, 2, 1, 128); // 9 key blocks add into each tile
  wide.opt.deterministic = true;
  check_repeatable(wide);
  Spec wide64 = bwd(DType::f16, 1, 1100, 900, 2, 2, 64);
  wide64.opt.deterministic = true;
  check_repeatable(wide64);
  Spec c = bwd(DType::f16, 2, 113, 203, 4, 2, 128);
  c.opt.deterministic = true;
  c.opt.causal = true;
  c.opt.alignment = Alignment::bottom_right;
  check_repeatable(c, 20);
  Spec cw = bwd(DType::bf16, 1, 1000, 1000, 4, 2, 128); // descending order over 8 key blocks
  cw.opt.deterministic = true;
  cw.opt.causal = true;
  check_repeatable(cw);
  Spec win = bwd(DType::bf16, 2, 700, 900, 2, 2, 64);
  win.opt.deterministic = true;
  win.opt.window_left = 300;
  win.opt.window_right = 40;
  check_repeatable(win, 20);
  Spec p = varlen({0, 70, 130, 5}, {40, 0, 150, 5}, 0, 0, true);
  p.opt.deterministic = true;
  p.opt.window_left = 9;
  check_repeatable(p, 20);
  Spec pad = varlen({64, 64, 64}, {64, 0, 20}, 64, 64, false);
  pad.opt.deterministic = true;
  pad.opt.softcap = 3.0;
  check_repeatable(pad, 20);
  Spec pad128 = varlen({80, 300, 79}, {300, 0, 20}, 300, 300, false, 128);
  pad128.opt.deterministic = true;
  check_repeatable(pad128, 20);
}

TEST_CASE(
    "cuda/backward: auto takes the sm90 family in deterministic mode on compute capability 9.0") {
  if (families().size() < 2)
    return;
  Spec s = bwd(DType::bf16, 1, 64, 64, 2, 2, 64);
  s.opt.deterministic = true;
  check_auto(s);
  const auto r = kattn::test::run_backward_case(Backend::cuda, s);
  REQUIRE(r.supported);
  CHECK(r.kernel.find("sm90_bwd_") != std::string::npos);
}

// Head dim 128 splits dQ's columns between the warpgroups (cuda/sm90/bwd_config.cuh), whose
// tails and varlen paths the head-dim-64 cases above do not reach.
TEST_CASE("cuda/backward: head dim 128 with tails, varlen, MQA and a softcap") {
  for (DType t : {DType::bf16, DType::f16}) {
    check(bwd(t, 1, 1, 70, 3, 3, 128));    // T = 1
    check(bwd(t, 2, 161, 129, 2, 2, 128)); // one row past a block
    check(bwd(t, 1, 240, 240, 4, 1, 128)); // MQA
  }
  check(varlen({128, 77, 1}, {128, 50, 113}, 128, 128, false, 128));
  check(varlen({80, 81, 79}, {64, 0, 20}, 81, 64, false, 128));     // k_len = 0: dq rows 0
  check(varlen({0, 70, 160, 5}, {40, 0, 150, 5}, 0, 0, true, 128)); // empty sequences
  Spec cap = bwd(DType::bf16, 2, 150, 150, 2, 2, 128);
  cap.opt.softcap = 5.0;
  check(cap);
}
