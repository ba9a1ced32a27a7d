// The portable backend on a paged KV cache (docs/semantics.md, paged_kv) on every host
// execution context: it gathers the pages into contiguous scratch and runs its usual kernels, so
// its output must be BITWISE its own output on the same keys stored contiguously (which
// test_portable_forward.cpp judges against the reference), and within the forward tolerance of
// the fp64 reference (test_portable_helpers.hpp). A page id out of range that validation could
// not see (a table in device memory; here one changed after validation) reads no memory and
// makes exactly the rows that see that page NaN.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "common/paged_cache.hpp"
#include "test_portable_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

// Poisoned outputs, then portable's forward of p on ctx (run_portable_on); returns out and lse.
std::pair<std::vector<double>, std::vector<double>> run_portable(Attn& a, const ForwardProblem& p,
                                                                 const ExecContext& ctx) {
  run_portable_on(a, p, ctx);
  return {a.out_values(), a.lse_values()};
}

Spec decode_spec(DType t, std::int64_t T, std::int64_t N, std::int64_t K,
                 std::vector<std::int64_t> k_lens, std::int64_t S) {
  Spec s = spec_of(static_cast<std::int64_t>(k_lens.size()), T, S, N, K, 64, 64);
  s.dtype = t;
  s.k_lens = std::move(k_lens);
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  return s;
}

} // namespace

TEST_CASE("portable/paged_kv: bitwise its contiguous result, within tolerance of the reference") {
  struct Case {
    Spec spec;
    PagedLayout layout;
  };
  std::vector<Case> cases = {
      {decode_spec(DType::f32, 1, 8, 2, {96, 33, 0, 64}, 96), {16, 3, 1, 21}},
      {decode_spec(DType::bf16, 4, 4, 1, {80, 80}, 80), {16, 2, 2, 22}},
      {decode_spec(DType::f16, 3, 2, 2, {7, 12}, 12), {1, 5, 4, 23}},
      {decode_spec(DType::f64, 5, 2, 1, {30, 1}, 30), {3, 0, 0, 24}},
  };
  cases[1].spec.sinks = true;
  cases[2].spec.opt.softcap = 4.0;
  HostSpaces spaces;
  for (Case& c : cases) {
    INFO("dtype ", to_string(c.spec.dtype), ", T ", c.spec.T, ", page size ", c.layout.page_size);
    Attn a(c.spec);
    const PagedCache cache = make_paged(a, c.layout);
    const Truth truth = fp64_truth(a);
    const ForwardTolerance tol = forward_tolerance(a, truth);
    for (const auto& [name, ctx] : spaces.contexts()) {
      INFO("execution context: ", name);
      const auto [out, lse] = run_portable(a, a.forward_problem(), ctx);
      const auto [paged_out, paged_lse] = run_portable(a, cache.problem(a), ctx);
      CHECK(paged_out == out);
      CHECK(paged_lse == lse);
      CHECK(max_abs_diff(paged_out, truth.out) <= tol.out);
      CHECK(max_abs_diff(paged_lse, truth.lse) <= tol.lse);
    }
  }
}

TEST_CASE("portable/paged_kv: an out-of-range page id makes only its rows NaN, reads nothing") {
  Spec s = decode_spec(DType::f32, 2, 2, 1, {8, 8}, 8);
  s.opt.causal = false;
  Attn a(s);
  PagedCache cache = make_paged(a, {4, 0, 0, 31});
  const ForwardProblem p = cache.problem(a);
  const Dims d = validate(p);
  // Sequence 1's second page becomes page 1 << 30: what a device-resident table may hold.
  cache.page_table.set_int(1 * 2 + 1, std::int64_t{1} << 30);
  HostSpaces spaces;
  for (const auto& [name, ctx] : spaces.contexts()) {
    INFO("execution context: ", name);
    poison(a.out.view);
    portable_backend().forward(p, d, ctx);
    const std::vector<double> out = a.out_values(); // [B=2, T=2, N=2, Hv=64]
    const std::size_t seq1 = out.size() / 2;        // sequence 1 starts here
    for (std::size_t i = 0; i < out.size(); ++i) {
      INFO("element ", i);
      CHECK(std::isnan(out[i]) == (i >= seq1)); // every row of sequence 1 sees all 8 keys
    }
  }
}
