// Validation of q, k, v, out: presence, ranks, extents, dtypes, memory spaces and strides.
// Every bad input must raise InvalidArgument naming the argument, the expectation and what
// came, before any backend is asked, with out and lse left byte-for-byte untouched.
#include <doctest/doctest.h>

#include "common/validate_fixture.hpp"

using namespace kattn;
using namespace kattn::test;

TEST_CASE("semantics/errors: the base problems of these tests are valid and do run") {
  // Guards every test below: each changes exactly one thing of a problem that passes, and a
  // backend that runs writes the outputs, so the untouched-bytes checks can fail.
  ForwardFixture f;
  auto calls = std::make_shared<FakeCalls>();
  const Registry r = fake_registry(calls);
  const auto before = f.out.raw();
  run_forward(r, f.p, {});
  CHECK(calls->forward == 1);
  CHECK(f.out.raw() != before);
  CHECK(f.out.get(0) == FakeBackend::marker);

  BackwardFixture b;
  run_backward(r, b.bp, {});
  CHECK(calls->backward == 1);
  CHECK(b.dq.get(0) == FakeBackend::marker);

  PackedFixture pk;
  run_forward(r, pk.p, {});
  CHECK(calls->forward == 2);
}

TEST_CASE("semantics/errors: q of rank 2") {
  ForwardFixture f;
  f.p.q.rank = 2;
  f.p.q.extent = {16, 64, 0, 0};
  expect_invalid(f.p,
                 {"q: expected rank 4 [B, T, N, H] (or rank 3 [total_q, N, H] with cu_seqlens), "
                  "got rank 2 [16, 64]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: q not given") {
  ForwardFixture f;
  f.p.q = Tensor{};
  expect_invalid(f.p, {"q: expected rank 4 [B, T, N, H]", "got none (rank 0)"}, f.outputs());
}

TEST_CASE("semantics/errors: k of rank 3 without cu_seqlens") {
  ForwardFixture f;
  f.p.k.rank = 3;
  expect_invalid(f.p, {"k: expected rank 4 [B, S, K, H], got rank 3 [2, 5, 2]"}, f.outputs());
}

TEST_CASE("semantics/errors: v of rank 5") {
  ForwardFixture f;
  f.p.v.rank = 5;
  expect_invalid(f.p, {"v: expected rank 0 (not given) to 4, got rank 5"}, f.outputs());
}

TEST_CASE("semantics/errors: out not given") {
  ForwardFixture f;
  f.p.out = Tensor{};
  expect_invalid(f.p, {"out: expected rank 4 [B, T, N, Hv], got none"}, f.outputs());
}

TEST_CASE("semantics/errors: null data pointer of q") {
  ForwardFixture f;
  f.p.q.data = nullptr;
  expect_invalid(f.p, {"q: expected a non-null data pointer", "[2, 6, 4, 8], got nullptr"},
                 f.outputs());
}

TEST_CASE("semantics/errors: null data pointer of out") {
  ForwardFixture f;
  f.p.out.data = nullptr;
  expect_invalid(f.p, {"out: expected a non-null data pointer", "got nullptr"}, f.outputs());
}

TEST_CASE("semantics/errors: negative query length T") {
  ForwardFixture f;
  f.p.q.extent[1] = -1;
  f.p.out.extent[1] = -1;
  expect_invalid(f.p, {"q: expected extent T >= 0 at dim 1", "got [2, -1, 4, 8]"}, f.outputs());
}

TEST_CASE("semantics/errors: zero head dim H (only B, T, S, N, K may be 0)") {
  ForwardFixture f;
  f.p.q.extent[3] = 0;
  f.p.k.extent[3] = 0;
  expect_invalid(f.p, {"q: expected head dim H >= 1 at dim 3", "got [2, 6, 4, 0]"}, f.outputs());
}

TEST_CASE("semantics/errors: negative head dim") {
  ForwardFixture f;
  f.p.v.extent[3] = -3;
  expect_invalid(f.p, {"v: expected extent Hv >= 0 at dim 3", "got [2, 5, 2, -3]"}, f.outputs());
}

TEST_CASE("semantics/errors: k batch differs from q") {
  ForwardFixture f;
  f.p.k.extent[0] = 3;
  expect_invalid(f.p, {"k: expected extent B=2 at dim 0 (from q), got [3, 5, 2, 8]"}, f.outputs());
}

TEST_CASE("semantics/errors: k head dim differs from q") {
  ForwardFixture f;
  f.p.k.extent[3] = 7;
  expect_invalid(f.p, {"k: expected extent H=8 at dim 3 (from q), got [2, 5, 2, 7]"}, f.outputs());
}

TEST_CASE("semantics/errors: v key length differs from k") {
  ForwardFixture f;
  f.p.v.extent[1] = 4;
  expect_invalid(f.p, {"v: expected extent S=5 at dim 1 (from k), got [2, 4, 2, 3]"}, f.outputs());
}

TEST_CASE("semantics/errors: v heads differ from k") {
  ForwardFixture f;
  f.p.v.extent[2] = 1;
  expect_invalid(f.p, {"v: expected extent K=2 at dim 2 (from k), got [2, 5, 1, 3]"}, f.outputs());
}

TEST_CASE("semantics/errors: out query length differs from q") {
  ForwardFixture f;
  f.p.out.extent[1] = 5;
  expect_invalid(f.p, {"out: expected extent T=6 at dim 1 (from q), got [2, 5, 4, 3]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: out heads differ from q") {
  ForwardFixture f;
  f.p.out.extent[2] = 2;
  expect_invalid(f.p, {"out: expected extent N=4 at dim 2 (from q), got [2, 6, 2, 3]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: out value dim differs from v") {
  ForwardFixture f;
  f.p.out.extent[3] = 8;
  expect_invalid(f.p, {"out: expected extent Hv=3 at dim 3 (from v), got [2, 6, 4, 8]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: KV heads that do not divide query heads (GQA)") {
  // N = 4 query heads, K = 3 KV heads.
  ForwardFixture f;
  HostTensor k(DType::f32, {2, 5, 3, 8}), v(DType::f32, {2, 5, 3, 3});
  k.fill_normal(1);
  v.fill_normal(2);
  f.p.k = k;
  f.p.v = v;
  expect_invalid(f.p, {"k: expected extent K at dim 2 to divide N=4 (GQA/MQA), got K=3"},
                 f.outputs());
}

TEST_CASE("semantics/errors: v dtype differs from q") {
  ForwardFixture f(DType::bf16);
  f.p.v.dtype = DType::f32;
  expect_invalid(f.p, {"v: expected dtype bf16 like q, got f32"}, f.outputs());
}

TEST_CASE("semantics/errors: k dtype differs from q") {
  ForwardFixture f(DType::f16);
  f.p.k.dtype = DType::bf16;
  expect_invalid(f.p, {"k: expected dtype f16 like q, got bf16"}, f.outputs());
}

TEST_CASE("semantics/errors: out dtype differs from q") {
  ForwardFixture f(DType::f32);
  f.p.out.dtype = DType::f64;
  expect_invalid(f.p, {"out: expected dtype f32 like q, got f64"}, f.outputs());
}

TEST_CASE("semantics/errors: integer q") {
  ForwardFixture f;
  for (Tensor* t : {&f.p.q, &f.p.k, &f.p.v, &f.p.out})
    t->dtype = DType::i32;
  expect_invalid(f.p, {"q: expected a floating dtype", "got i32"}, f.outputs());
}

TEST_CASE("semantics/errors: k in another memory space than q") {
  ForwardFixture f;
  f.p.k.space = MemorySpace::cuda_device;
  expect_invalid(f.p, {"k: expected memory space host like q, got cuda_device"}, f.outputs());
}

TEST_CASE("semantics/errors: lse in another memory space than q") {
  ForwardFixture f;
  f.p.extras.lse.space = MemorySpace::hip_device;
  expect_invalid(f.p, {"extras.lse: expected memory space host like q, got hip_device"},
                 f.outputs());
}

TEST_CASE("semantics/errors: negative stride of q") {
  ForwardFixture f;
  f.p.q.stride[1] = -f.p.q.stride[1];
  expect_invalid(f.p, {"q: expected non-negative strides, got strides [192, -32, 8, 1]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: out aliasing itself through a zero stride") {
  ForwardFixture f;
  f.p.out.stride[1] = 0;
  expect_invalid(f.p,
                 {"out: expected strides that give every element its own address",
                  "got strides [72, 0, 3, 1]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: data pointer without a rank") {
  ForwardFixture f;
  HostTensor bias(DType::f32, {2, 4, 6, 5});
  f.p.extras.bias.data = bias.view().data; // rank left 0
  expect_invalid(f.p,
                 {"extras.bias: expected rank > 0 for a tensor with a data pointer", "got rank 0"},
                 f.outputs());
}

TEST_CASE("semantics/dtypes: f8 q/k/v/out pass validation (backends decide in supports())") {
  // FP8 is a descriptor dtype: validation accepts it; only backends that serve an FP8 forward
  // (cudnn) accept it in supports(), the others refuse it with a reason.
  ForwardFixture f;
  for (Tensor* t : {&f.p.q, &f.p.k, &f.p.v, &f.p.out})
    t->dtype = DType::f8_e4m3;
  CHECK_NOTHROW((void)validate(f.p));
}
