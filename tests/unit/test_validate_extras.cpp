// Validation of the optional inputs: lse, bias, boolean mask, ALiBi slopes and the padded
// batch lengths. Sizes: B=2, T=6, S=5, N=4, K=2, H=8, Hv=3 (every extent differs).
#include <doctest/doctest.h>

#include "common/validate_fixture.hpp"

using namespace kattn;
using namespace kattn::test;

TEST_CASE("semantics/errors: lse of the wrong shape") {
  ForwardFixture f;
  HostTensor lse(DType::f32, {2, 6, 4}); // [B, T, N] instead of [B, N, T]
  lse.poison();
  f.p.extras.lse = lse;
  expect_invalid(f.p, {"extras.lse: expected shape [B, N, T] = [2, 4, 6], got [2, 6, 4]"},
                 {&f.out, &lse});
}

TEST_CASE("semantics/errors: lse of dtype f16") {
  ForwardFixture f;
  f.p.extras.lse.dtype = DType::f16;
  expect_invalid(f.p, {"extras.lse: expected dtype f32, got f16"}, f.outputs());
}

TEST_CASE("semantics/errors: lse aliasing itself through a zero stride") {
  ForwardFixture f;
  f.p.extras.lse.stride[2] = 0;
  expect_invalid(f.p,
                 {"extras.lse: expected strides that give every element its own address",
                  "got strides [24, 6, 0]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: mask with the wrong key length") {
  ForwardFixture f;
  HostTensor mask(DType::boolean, {2, 4, 6, 4});
  f.p.extras.mask = mask;
  expect_invalid(f.p,
                 {"extras.mask: expected shape [B|1, N|1, T, S] = [2|1, 4|1, 6, 5], got [2, 4, "
                  "6, 4]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: mask of rank 2") {
  ForwardFixture f;
  HostTensor mask(DType::boolean, {6, 5});
  f.p.extras.mask = mask;
  expect_invalid(f.p, {"extras.mask: expected shape [B|1, N|1, T, S]", "got rank 2 [6, 5]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: mask of dtype f32") {
  ForwardFixture f;
  HostTensor mask(DType::f32, {1, 4, 6, 5});
  mask.fill_normal(3);
  f.p.extras.mask = mask;
  expect_invalid(f.p, {"extras.mask: expected dtype bool, got f32"}, f.outputs());
}

TEST_CASE("semantics/errors: bias with a batch extent that is neither B nor 1") {
  ForwardFixture f;
  HostTensor bias(DType::f32, {3, 1, 6, 5});
  bias.fill_normal(4);
  f.p.extras.bias = bias;
  expect_invalid(f.p,
                 {"extras.bias: expected shape [B|1, N|1, T, S] = [2|1, 4|1, 6, 5], got [3, 1, "
                  "6, 5]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: bias broadcast over T") {
  // Broadcasting is defined over B and N only; T and S must be full.
  ForwardFixture f;
  HostTensor bias(DType::f32, {2, 4, 1, 5});
  bias.fill_normal(5);
  f.p.extras.bias = bias;
  expect_invalid(f.p, {"extras.bias: expected shape [B|1, N|1, T, S]", "got [2, 4, 1, 5]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: bias of dtype bool") {
  ForwardFixture f;
  HostTensor bias(DType::boolean, {2, 4, 6, 5});
  f.p.extras.bias = bias;
  expect_invalid(f.p, {"extras.bias: expected a floating dtype", "got bool"}, f.outputs());
}

TEST_CASE("semantics/errors: bias with a null data pointer") {
  ForwardFixture f;
  f.p.extras.bias = Tensor::contiguous(nullptr, DType::f32, {1, 1, 6, 5});
  expect_invalid(f.p, {"extras.bias: expected a non-null data pointer", "got nullptr"},
                 f.outputs());
}

TEST_CASE("semantics/errors: ALiBi slopes of the wrong length") {
  ForwardFixture f;
  HostTensor slopes(DType::f32, {2});
  slopes.fill_normal(6);
  f.p.extras.alibi_slopes = slopes;
  expect_invalid(f.p, {"extras.alibi_slopes: expected shape [N] = [4] or [B, N] = [2, 4], got [2]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: ALiBi slopes of dtype f16") {
  ForwardFixture f;
  HostTensor slopes(DType::f16, {2, 4});
  slopes.fill_normal(7);
  f.p.extras.alibi_slopes = slopes;
  expect_invalid(f.p, {"extras.alibi_slopes: expected dtype f32, got f16"}, f.outputs());
}

TEST_CASE("semantics/errors: seqlens_q of the wrong extent") {
  ForwardFixture f;
  HostTensor lens(DType::i32, {3});
  f.p.extras.seqlens_q = lens;
  expect_invalid(f.p, {"extras.seqlens_q: expected shape [B] = [2], got [3]"}, f.outputs());
}

TEST_CASE("semantics/errors: seqlens_k of dtype f32") {
  ForwardFixture f;
  HostTensor lens(DType::f32, {2});
  lens.fill(3.0);
  f.p.extras.seqlens_k = lens;
  expect_invalid(f.p, {"extras.seqlens_k: expected dtype i32, got f32"}, f.outputs());
}

TEST_CASE("semantics/errors: seqlens_q longer than T") {
  ForwardFixture f;
  HostTensor lens(DType::i32, {2});
  lens.set_int(0, 6);
  lens.set_int(1, 7);
  f.p.extras.seqlens_q = lens;
  expect_invalid(f.p, {"extras.seqlens_q: expected values in [0, T] = [0, 6], got 7 at index 1"},
                 f.outputs());
}

TEST_CASE("semantics/errors: negative seqlens_k") {
  ForwardFixture f;
  HostTensor lens(DType::i32, {2});
  lens.set_int(0, -1);
  lens.set_int(1, 5);
  f.p.extras.seqlens_k = lens;
  expect_invalid(f.p, {"extras.seqlens_k: expected values in [0, S] = [0, 5], got -1 at index 0"},
                 f.outputs());
}

TEST_CASE("semantics/errors: max_seqlen without cu_seqlens") {
  ForwardFixture f;
  f.p.extras.max_seqlen_k = 5;
  expect_invalid(f.p, {"extras.max_seqlen_k: expected 0 without cu_seqlens", "got 5"}, f.outputs());
}
