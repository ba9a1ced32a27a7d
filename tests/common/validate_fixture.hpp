// Test helper for validation tests: small valid problems (batched, packed varlen, backward)
// with random inputs and NaN-poisoned outputs, and expect_invalid(), which runs a bad problem
// through every entry point and checks the error, its message and that nothing was written.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common/fake_backend.hpp"
#include "common/host_tensor.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/validate.hpp"

namespace kattn::test {

// Sizes chosen so that every extent differs: a check comparing the wrong pair of dims fails.
struct Sizes {
  static constexpr std::int64_t B = 2, T = 6, S = 5, N = 4, K = 2, H = 8, Hv = 3;
};

struct ForwardFixture : Sizes {
  HostTensor q, k, v, out, lse;
  ForwardProblem p;

  explicit ForwardFixture(DType dt = DType::f32)
      : q(dt, {B, T, N, H}), k(dt, {B, S, K, H}), v(dt, {B, S, K, Hv}), out(dt, {B, T, N, Hv}),
        lse(DType::f32, {B, N, T}) {
    q.fill_normal(11);
    k.fill_normal(12);
    v.fill_normal(13);
    out.poison();
    lse.poison();
    p.q = q;
    p.k = k;
    p.v = v;
    p.out = out;
    p.extras.lse = lse;
  }
  std::vector<const HostTensor*> outputs() const { return {&out, &lse}; }
};

// Packed varlen: sequences of (4, 5) queries and (3, 4) keys.
struct PackedFixture : Sizes {
  static constexpr std::int64_t total_q = 9, total_k = 7;
  HostTensor q, k, v, out, lse, cu_q, cu_k;
  ForwardProblem p;

  PackedFixture()
      : q(DType::f32, {total_q, N, H}), k(DType::f32, {total_k, K, H}),
        v(DType::f32, {total_k, K, Hv}), out(DType::f32, {total_q, N, Hv}),
        lse(DType::f32, {N, total_q}), cu_q(DType::i32, {3}), cu_k(DType::i32, {3}) {
    q.fill_normal(21);
    k.fill_normal(22);
    v.fill_normal(23);
    out.poison();
    lse.poison();
    set_offsets(cu_q, {0, 4, 9});
    set_offsets(cu_k, {0, 3, 7});
    p.q = q;
    p.k = k;
    p.v = v;
    p.out = out;
    p.extras.lse = lse;
    p.extras.cu_seqlens_q = cu_q;
    p.extras.cu_seqlens_k = cu_k;
  }
  static void set_offsets(HostTensor& t, std::initializer_list<std::int64_t> values) {
    std::int64_t i = 0;
    for (std::int64_t v : values)
      t.set_int(i++, v);
  }
  std::vector<const HostTensor*> outputs() const { return {&out, &lse}; }
};

struct BackwardFixture : ForwardFixture {
  HostTensor dout, dq, dk, dv;
  BackwardProblem bp;

  explicit BackwardFixture(DType dt = DType::f32)
      : ForwardFixture(dt), dout(dt, {B, T, N, Hv}), dq(dt, {B, T, N, H}), dk(dt, {B, S, K, H}),
        dv(dt, {B, S, K, Hv}) {
    out.fill_normal(14); // the forward's output is an input of the backward
    lse.fill_normal(15);
    dout.fill_normal(16);
    dq.poison();
    dk.poison();
    dv.poison();
    p.out = out;
    bp.forward = p;
    bp.dout = dout;
    bp.dq = dq;
    bp.dk = dk;
    bp.dv = dv;
  }
  std::vector<const HostTensor*> grads() const { return {&dq, &dk, &dv}; }
};

// Calls f and checks it throws kattn::InvalidArgument whose message contains every needle.
template <class F>
void check_invalid(F&& f, const std::vector<std::string>& needles) {
  std::string msg;
  bool invalid = false;
  try {
    f();
  } catch (const InvalidArgument& e) {
    invalid = true;
    msg = e.what();
  } catch (const std::exception& e) {
    msg = std::string("other exception: ") + e.what();
  }
  INFO("message: " << msg);
  REQUIRE(invalid);
  for (const std::string& n : needles)
    CHECK_MESSAGE(msg.find(n) != std::string::npos, n);
}

template <class Problem>
void expect_invalid(const Problem& p, const std::vector<std::string>& needles,
                    const std::vector<const HostTensor*>& outputs) {
  std::vector<std::vector<std::byte>> before;
  for (const HostTensor* o : outputs)
    before.push_back(o->raw());
  auto calls = std::make_shared<FakeCalls>();
  const Registry r = fake_registry(calls);
  check_invalid([&] { (void)validate(p); }, needles);
  if constexpr (std::is_same_v<Problem, ForwardProblem>) {
    check_invalid([&] { run_forward(r, p, {}); }, needles);
    check_invalid([&] { attention_forward(p); }, needles);
    check_invalid([&] { (void)explain(r, p, {}); }, needles);
  } else {
    check_invalid([&] { run_backward(r, p, {}); }, needles);
    check_invalid([&] { attention_backward(p); }, needles);
    check_invalid([&] { (void)explain(r, p, {}); }, needles);
  }
  // Validation comes before any backend is asked, let alone run.
  CHECK(calls->supports_forward + calls->supports_backward == 0);
  CHECK(calls->runs() == 0);
  for (std::size_t i = 0; i < outputs.size(); ++i)
    CHECK(outputs[i]->raw() == before[i]);
}

} // namespace kattn::test
