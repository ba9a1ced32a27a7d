// docs/semantics.md rule empty (issue 20 item 7): B, T, S and N may be 0. A problem
// with no output element is a no-op on every backend; no keys leaves every query row fully
// masked (out 0, LSE -inf); in the backward no queries leaves dk = dv = 0 and no keys dq = 0.
// Before, every zero extent was an InvalidArgument: an MPI rank holding no tokens this step
// stopped the run.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/reference_helpers.hpp"
#include "common/reference_problem.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/validate.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

bool all_equal(const std::vector<double>& v, double x) {
  for (double e : v)
    if (!(e == x))
      return false;
  return true;
}

// The CPU backends this build has, and auto.
std::vector<Backend> cpu_backends(bool backward) {
  std::vector<Backend> r = {Backend::automatic};
  for (Backend b : {Backend::reference, Backend::naive, Backend::portable})
    if (default_registry().find(b) && !(backward && b == Backend::naive))
      r.push_back(b);
  return r;
}

ForwardProblem forced(ForwardProblem p, Backend b) {
  p.options.backend = b;
  return p;
}

Spec empty_spec(std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K) {
  Spec s = spec_of(B, T, S, N, K, 8, 8);
  s.dtype = DType::f32;
  return s;
}

// The tensors of `p` with no element get a null pointer (a zero-size View has none).
template <class P>
void null_empty(P& p) {
  for (Tensor* t : {&p.q, &p.k, &p.v, &p.out, &p.extras.lse})
    if (t->defined() && t->numel() == 0)
      t->data = nullptr;
}

} // namespace

TEST_CASE("semantics/empty: a forward with no output element is a no-op on every backend, even "
          "with null pointers") {
  struct Case {
    const char* what;
    Spec spec;
  };
  std::vector<Case> cases = {{"B = 0", empty_spec(0, 5, 7, 2, 1)},
                             {"T = 0", empty_spec(2, 0, 7, 2, 1)},
                             {"T = S = 0", empty_spec(2, 0, 0, 2, 1)},
                             {"N = 0, K = 1", empty_spec(2, 5, 7, 0, 1)}};
  Spec packed = empty_spec(0, 0, 0, 2, 1);
  packed.packed = true;
  packed.q_lens = {0, 0};
  packed.k_lens = {3, 0};
  cases.push_back({"packed, total_q = 0", packed});
  packed.q_lens = packed.k_lens = {};
  cases.push_back({"packed, B = 0 (cu_seqlens [1])", packed});
  for (const Case& c : cases)
    for (Backend b : cpu_backends(false)) {
      INFO(std::string(c.what) << ", backend " << to_string(b));
      Attn a(c.spec);
      ForwardProblem p = forced(a.forward_problem(), b);
      null_empty(p);
      const Selection s = select(default_registry(), p, ExecContext{});
      CHECK(s.empty);
      CHECK(s.impl == nullptr);
      CHECK(has(format_selection(s), "nothing to compute"));
      CHECK_NOTHROW(run_forward(default_registry(), p, ExecContext{}));
      p.options.dropout_p = 0.5; // (found by the fuzzer: the Philox limit divided by N = 0)
      CHECK_NOTHROW(run_forward(default_registry(), p, ExecContext{}));
      p.options.dropout_p = 0.0;
      // Forced GPU backends too: nothing runs (an MPI rank with no tokens must not fail).
      p.options.backend = Backend::cuda;
      CHECK_NOTHROW(run_forward(default_registry(), p, ExecContext{}));
    }
}

TEST_CASE("semantics/empty: no keys leaves every row fully masked: out 0, LSE -inf") {
  Spec batched = empty_spec(2, 5, 0, 4, 2);
  Spec padded = empty_spec(2, 5, 3, 4, 2); // every sequence's keys padded away
  padded.k_lens = {0, 0};
  Spec packed = empty_spec(0, 0, 0, 4, 2);
  packed.packed = true;
  packed.q_lens = {3, 2};
  packed.k_lens = {0, 0}; // total_k = 0
  for (const Spec& spec : {batched, padded, packed})
    for (Backend b : cpu_backends(false)) {
      if (spec.packed && b == Backend::naive)
        continue; // (naive serves no packed varlen)
      INFO("S " << spec.S << " packed " << spec.packed << ", backend " << to_string(b));
      Attn a(spec);
      poison(a.out.view);
      poison(a.lse.view());
      ForwardProblem p = forced(a.forward_problem(), b);
      null_empty(p);
      CHECK_FALSE(select(default_registry(), p, ExecContext{}).empty);
      run_forward(default_registry(), p, ExecContext{});
      CHECK(all_equal(a.out_values(), 0.0));
      CHECK(all_equal(a.lse_values(), -kInf));
    }
}

TEST_CASE("semantics/empty: backward with no queries gives dk = dv = 0, with no keys dq = 0") {
  struct Case {
    const char* what;
    Spec spec;
    bool dq_zero, dkv_zero;
  };
  const std::vector<Case> cases = {{"T = 0", empty_spec(2, 0, 6, 4, 2), false, true},
                                   {"S = 0", empty_spec(2, 5, 0, 4, 2), true, false},
                                   {"N = 0, K = 2", empty_spec(2, 5, 6, 0, 2), false, true}};
  for (const Case& c : cases)
    for (bool bias : {false, true})
      for (Backend b : cpu_backends(true)) {
        INFO(std::string(c.what) << (bias ? " with bias" : "") << ", backend " << to_string(b));
        Spec spec = c.spec;
        spec.bias = bias;
        Attn a(spec);
        a.forward(); // the LSE the backward reads (empty when T = 0)
        poison(a.dq.view);
        poison(a.dk.view);
        poison(a.dv.view);
        poison(a.dbias.view());
        BackwardProblem p = a.backward_problem(bias);
        p.forward.options.backend = b;
        run_backward(default_registry(), p, ExecContext{});
        if (c.dq_zero)
          CHECK(all_equal(read_logical(a.dq.view), 0.0));
        if (c.dkv_zero) {
          CHECK(all_equal(read_logical(a.dk.view), 0.0));
          CHECK(all_equal(read_logical(a.dv.view), 0.0));
        }
        if (bias) // dbias [B, N, T, S]: no element at all in these cases
          CHECK(a.dbias.view().numel() == 0);
      }
  // A bias broadcast over heads with N = 0: dbias [B, 1, T, S] has elements, and no head adds
  // to them (found by the fuzzer with K = 0, which is now refused: backends divide by N / K).
  for (Backend b : cpu_backends(true)) {
    INFO("N = 0, broadcast dbias, backend " << to_string(b));
    Spec spec = empty_spec(2, 5, 6, 0, 1);
    spec.bias = spec.bias_bcast_n = true;
    Attn a(spec);
    a.forward();
    poison(a.dbias.view());
    BackwardProblem p = a.backward_problem(true);
    p.forward.options.backend = b;
    run_backward(default_registry(), p, ExecContext{});
    CHECK(a.dbias.view().numel() == 2 * 5 * 6);
    CHECK(all_equal(read_logical(a.dbias.view()), 0.0));
  }
}

TEST_CASE("semantics/empty: the GPU kernel backends refuse no keys and no queries, naming why") {
  // Fake device memory (never dereferenced: support checks read no tensor).
  const auto device = [](Tensor t, std::uintptr_t at) {
    t.space = MemorySpace::cuda_device;
    t.dtype = DType::bf16;
    t.data = t.numel() == 0 ? nullptr : reinterpret_cast<void*>(at);
    return t;
  };
  ExecContext x;
  x.device = Device::cuda;
  // S = 0 in the forward; T = 0 in the backward (a forward with T = 0 writes nothing).
  for (auto [T, S] : {std::pair<std::int64_t, std::int64_t>{5, 0}, {0, 6}}) {
    Attn a(empty_spec(2, T, S, 4, 2));
    BackwardProblem p = a.backward_problem(false);
    ForwardProblem& f = p.forward;
    f.extras.lse = Tensor{};
    std::uintptr_t at = std::uintptr_t{1} << 40;
    for (Tensor* t : {&f.q, &f.k, &f.v, &f.out, &p.dout, &p.dq, &p.dk, &p.dv})
      *t = device(*t, at += std::uintptr_t{1} << 32);
    const Dims d = validate(p);
    for (Backend b : {Backend::cuda, Backend::cudnn}) {
      const BackendImpl* impl = default_registry().find(b);
      if (impl == nullptr)
        continue;
      const Support s = T == 0 ? impl->supports(p, d, x) : impl->supports(f, d, x);
      INFO(to_string(b) << " T=" << T << " S=" << S << ": " << s.reason);
      CHECK_FALSE(s.ok);
      CHECK(has(s.reason, T == 0 ? "no queries" : "no keys"));
    }
  }
}

TEST_CASE("semantics/empty: what may not be empty is still refused, naming it") {
  Attn a(empty_spec(2, 5, 7, 4, 2));
  ForwardProblem p = a.forward_problem();
  p.k.extent[2] = p.v.extent[2] = 0; // K = 0
  CHECK(has(refusal_of(p), "k: expected extent K >= 1 at dim 2 (key/value heads; N may be 0)"));
  p = a.forward_problem();
  p.out.data = nullptr; // out has elements
  CHECK_THROWS_AS(validate(p), InvalidArgument);
  Attn h0(spec_of(2, 5, 7, 4, 2, 8, 8));
  p = h0.forward_problem();
  p.v.extent[3] = p.out.extent[3] = 0; // Hv = 0
  CHECK(has(refusal_of(p), "v: expected head dim Hv >= 1 at dim 3"));
}
