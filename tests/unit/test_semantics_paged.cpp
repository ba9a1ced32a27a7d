// Semantics rule paged_kv (docs/semantics.md): k and v read through a page table. The reference
// is judged against itself on the same keys stored contiguously (tests/common/paged_cache.hpp:
// shuffled pages among NaN-filled spare pages, unused slots -1, a shared prefix page): both do
// the same operations in the same order, so the results are bitwise equal. Bad page tables are
// refused naming the argument, before anything is written; backends without a paged path refuse
// the problem; a backward with a page table is refused.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/paged_cache.hpp"
#include "common/reference_helpers.hpp"
#include "common/validate_fixture.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/registry.hpp"
#include "kokkosattn/validate.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

struct PagedCase {
  const char* name;
  Spec spec;
  PagedLayout layout;
};

Spec paged_spec(std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K,
                std::vector<std::int64_t> k_lens) {
  Spec s = spec_of(B, T, S, N, K, 8, 8);
  s.k_lens = std::move(k_lens);
  s.opt.alignment = Alignment::bottom_right; // the decode default
  return s;
}

std::vector<PagedCase> paged_cases() {
  std::vector<PagedCase> c;
  {
    Spec s = paged_spec(3, 1, 48, 4, 2, {48, 17, 0}); // decode: one new query, GQA
    s.opt.causal = true;
    c.push_back({"decode T=1, GQA, causal, page 16, shared first page", s, {16, 3, 1, 5}});
  }
  {
    Spec s = paged_spec(2, 4, 12, 3, 1, {12, 7}); // speculative: 4 queries, MQA
    s.opt.causal = true;
    s.opt.softcap = 5.0;
    s.sinks = true;
    c.push_back({"T=4, MQA, softcap, sinks, page 1", s, {1, 4, 3, 6}});
  }
  {
    Spec s = paged_spec(2, 5, 15, 2, 2, {15, 9}); // chunked prefill with every score extra
    s.Hv = 5;
    s.bias = true;
    s.mask = true;
    s.alibi = 2;
    s.opt.window_left = 6;
    s.q_lens = {5, 3};
    c.push_back({"T=5, Hv != H, bias, mask, ALiBi, window, padded q, page 3", s, {3, 2, 0, 7}});
  }
  {
    Spec s = paged_spec(2, 6, 32, 2, 1, {32, 20});
    s.opt.dropout_p = 0.25;
    s.opt.dropout_seed = 99;
    s.opt.alignment = Alignment::top_left;
    c.push_back({"top-left, dropout, page 32 (one page per sequence)", s, {32, 1, 1, 8}});
  }
  return c;
}

} // namespace

TEST_CASE("semantics/paged_kv: the reference through a page table equals it on contiguous keys") {
  for (PagedCase& pc : paged_cases()) {
    INFO(pc.name);
    Attn a(pc.spec);
    const PagedCache cache = make_paged(a, pc.layout); // (may rewrite a's k and v: shared pages)
    a.forward();
    const std::vector<double> out = a.out_values(), lse = a.lse_values();
    REQUIRE(refusal_of(cache.problem(a)).empty());
    const ForwardProblem p = cache.problem(a);
    const Dims d = validate(p);
    CHECK(d.paged);
    CHECK(d.page_size == pc.layout.page_size);
    CHECK(d.S == pc.spec.S);
    poison(a.out.view);
    poison(a.lse.view());
    ForwardProblem r = p;
    r.options.backend = Backend::reference;
    run_forward(default_registry(), r, ExecContext{});
    CHECK(a.out_values() == out); // bitwise (NaN-free: the spare pages are NaN)
    CHECK(a.lse_values() == lse);
  }
}

TEST_CASE("semantics/paged_kv: bad page tables are refused naming the argument") {
  Spec s = paged_spec(2, 2, 8, 2, 1, {8, 5});
  Attn a(s);
  const PagedCache cache = make_paged(a, {4, 1, 0, 3});
  const std::vector<const HostTensor*> outputs = {&a.out.storage, &a.lse};
  {
    PagedCache c = make_paged(a, {4, 1, 0, 3});
    c.page_table.set_int(3, 5); // sequence 1's second page: 5 of 2 + 2 used + 1 spare pages
    expect_invalid(c.problem(a),
                   {"extras.page_table: expected page ids in [0, num_pages) = [0, 5)",
                    "sequence 1 uses (seqlens_k[1] = 5, page_size 4), got 5 at [1, 1]"},
                   outputs);
  }
  {
    PagedCache c = make_paged(a, {4, 1, 0, 3});
    c.page_table.set_int(0, -1);
    expect_invalid(c.problem(a), {"extras.page_table: expected page ids", "got -1 at [0, 0]"},
                   outputs);
  }
  {
    HostTensor lens(DType::i32, {2});
    lens.set_int(0, 9); // 2 slots of 4 keys hold 8
    lens.set_int(1, 5);
    ForwardProblem p = cache.problem(a);
    p.extras.seqlens_k = lens.view();
    expect_invalid(p,
                   {"extras.seqlens_k: expected values in [0, S = max_pages_per_seq * page_size] "
                    "= [0, 8], got 9 at index 0"},
                   outputs);
  }
  {
    ForwardProblem p = cache.problem(a);
    p.extras.seqlens_k = Tensor();
    expect_invalid(p, {"extras.seqlens_k: expected with extras.page_table"}, outputs);
  }
  {
    HostTensor table(DType::i32, {3, 2});
    ForwardProblem p = cache.problem(a);
    p.extras.page_table = table.view();
    expect_invalid(p,
                   {"extras.page_table: expected shape [B, max_pages_per_seq] with B = 2 (from "
                    "q), got [3, 2]"},
                   outputs);
  }
  {
    HostTensor table(DType::f32, {2, 2});
    ForwardProblem p = cache.problem(a);
    p.extras.page_table = table.view();
    expect_invalid(p, {"extras.page_table: expected dtype i32, got f32"}, outputs);
  }
  {
    HostTensor v(s.dtype, {3, 4, 1, 8}); // 3 pages against k's 5
    ForwardProblem p = cache.problem(a);
    p.v = v.view();
    expect_invalid(p, {"v: expected extent num_pages=5 at dim 0 (from k)"}, outputs);
  }
  {
    HostTensor k(s.dtype, {5, 0, 1, 8}), v(s.dtype, {5, 0, 1, 8});
    ForwardProblem p = cache.problem(a);
    p.k = k.view();
    p.v = v.view();
    expect_invalid(p, {"k: expected page_size >= 1 at dim 1"}, outputs);
  }
  {
    HostTensor k(s.dtype, {5, 1, 8}); // rank 3
    ForwardProblem p = cache.problem(a);
    p.k = k.view();
    expect_invalid(p,
                   {"k: expected rank 4 [num_pages, page_size, K, H] (a paged KV cache: "
                    "extras.page_table given)"},
                   outputs);
  }
  {
    BackwardProblem b = a.backward_problem(false);
    b.forward = cache.problem(a);
    expect_invalid(b, {"extras.page_table: expected not given in a backward problem"},
                   {&a.dq.storage, &a.dk.storage, &a.dv.storage});
  }
}

TEST_CASE("semantics/paged_kv: packed varlen and a page table are refused together") {
  Spec s = spec_of(2, 3, 4, 2, 1, 4, 4);
  s.packed = true;
  s.q_lens = {3, 2};
  s.k_lens = {4, 1};
  Attn a(s);
  HostTensor table(DType::i32, {2, 1});
  ForwardProblem p = a.forward_problem();
  p.extras.page_table = table.view();
  CHECK(refusal_of(p).find("extras.page_table: expected not given with cu_seqlens") !=
        std::string::npos);
}

TEST_CASE("semantics/paged_kv: backends without a paged path refuse it, forced or not") {
  Spec s = paged_spec(2, 1, 8, 2, 1, {8, 3});
  Attn a(s);
  const PagedCache cache = make_paged(a, {4, 1, 0, 3});
  const ForwardProblem p = cache.problem(a);
  for (const BackendVerdict& v : explain(default_registry(), p, ExecContext{})) {
    INFO("backend ", to_string(v.backend), ": ", v.reason);
    // reference, portable and cuda (its decode kernel: tests/gpu/test_cuda_decode.cpp) read it.
    if (!v.built || v.backend == Backend::reference || v.backend == Backend::portable ||
        v.backend == Backend::cuda)
      continue;
    CHECK_FALSE(v.supported);
    CHECK(v.reason.find("paged KV cache (extras.page_table) is not implemented") !=
          std::string::npos);
  }
  ForwardProblem forced = p;
  forced.options.backend = Backend::naive;
  try {
    run_forward(default_registry(), forced, ExecContext{});
    FAIL("a forced naive backend ran a paged problem");
  } catch (const Unsupported& e) {
    CHECK(std::string(e.what()).find("extras.page_table") != std::string::npos);
  }
}
