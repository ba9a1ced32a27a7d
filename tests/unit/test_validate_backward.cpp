// Validation of BackwardProblem: the forward part is validated as in the forward (out is an
// input), dout/dq/dk/dv/dbias must match their counterparts in shape, dtype and memory space.
// On failure dq, dk, dv (and dbias) stay byte-for-byte untouched.
#include <doctest/doctest.h>

#include "common/validate_fixture.hpp"

using namespace kattn;
using namespace kattn::test;

TEST_CASE("semantics/errors: backward dq of the wrong shape") {
  BackwardFixture f;
  f.bp.dq.extent[3] = 4;
  expect_invalid(f.bp, {"dq: expected shape [2, 6, 4, 8] like q, got [2, 6, 4, 4]"}, f.grads());
}

TEST_CASE("semantics/errors: backward dk of another dtype than k") {
  BackwardFixture f(DType::bf16);
  f.bp.dk.dtype = DType::f32;
  expect_invalid(f.bp, {"dk: expected dtype bf16 like k, got f32"}, f.grads());
}

TEST_CASE("semantics/errors: backward without dv") {
  BackwardFixture f;
  f.bp.dv = Tensor{};
  expect_invalid(f.bp, {"dv: expected a tensor of shape [2, 5, 2, 3] like v, got none"}, f.grads());
}

TEST_CASE("semantics/errors: backward dout of the wrong shape") {
  BackwardFixture f;
  f.bp.dout.extent[1] = 5;
  expect_invalid(f.bp, {"dout: expected shape [2, 6, 4, 3] like out, got [2, 5, 4, 3]"}, f.grads());
}

TEST_CASE("semantics/errors: backward dout with a null data pointer") {
  BackwardFixture f;
  f.bp.dout.data = nullptr;
  expect_invalid(f.bp, {"dout: expected a non-null data pointer", "got nullptr"}, f.grads());
}

TEST_CASE("semantics/errors: backward dq in another memory space") {
  BackwardFixture f;
  f.bp.dq.space = MemorySpace::cuda_device;
  expect_invalid(f.bp, {"dq: expected memory space host like q, got cuda_device"}, f.grads());
}

TEST_CASE("semantics/errors: backward dk with a negative stride") {
  BackwardFixture f;
  f.bp.dk.stride[0] = -1;
  expect_invalid(f.bp, {"dk: expected non-negative strides, got strides [-1, 16, 8, 1]"},
                 f.grads());
}

TEST_CASE("semantics/errors: backward dv aliasing itself") {
  BackwardFixture f;
  f.bp.dv.stride[1] = 0;
  expect_invalid(f.bp, {"dv: expected strides that give every element its own address"}, f.grads());
}

TEST_CASE("semantics/errors: backward dbias without bias") {
  BackwardFixture f;
  HostTensor dbias(DType::f32, {2, 4, 6, 5});
  dbias.poison();
  f.bp.dbias = dbias;
  expect_invalid(f.bp, {"dbias: expected only with extras.bias", "got [2, 4, 6, 5] without"},
                 {&f.dq, &f.dk, &f.dv, &dbias});
}

TEST_CASE("semantics/errors: backward dbias of another shape than bias") {
  BackwardFixture f;
  HostTensor bias(DType::f32, {1, 4, 6, 5}), dbias(DType::f32, {2, 4, 6, 5});
  bias.fill_normal(9);
  dbias.poison();
  f.bp.forward.extras.bias = bias;
  f.bp.dbias = dbias;
  expect_invalid(f.bp, {"dbias: expected shape [1, 4, 6, 5] like extras.bias, got [2, 4, 6, 5]"},
                 {&f.dq, &f.dk, &f.dv, &dbias});
}

TEST_CASE("semantics/errors: backward dbias of another dtype than bias") {
  BackwardFixture f;
  HostTensor bias(DType::f32, {2, 4, 6, 5}), dbias(DType::f16, {2, 4, 6, 5});
  bias.fill_normal(10);
  dbias.poison();
  f.bp.forward.extras.bias = bias;
  f.bp.dbias = dbias;
  expect_invalid(f.bp, {"dbias: expected dtype f32 like extras.bias, got f16"},
                 {&f.dq, &f.dk, &f.dv, &dbias});
}

TEST_CASE("semantics/errors: backward with an invalid forward part") {
  BackwardFixture f;
  f.bp.forward.out.extent[2] = 2;
  expect_invalid(f.bp, {"out: expected extent N=4 at dim 2 (from q), got [2, 6, 2, 3]"}, f.grads());
}

TEST_CASE("semantics/errors: backward with a causal window_right 2") {
  BackwardFixture f;
  f.bp.forward.options.causal = true;
  f.bp.forward.options.window_right = 2;
  expect_invalid(f.bp,
                 {"options.window_right: expected -1 or 0 with options.causal = true", "got 2"},
                 f.grads());
}

TEST_CASE("semantics/errors: backward lse of the wrong dtype") {
  BackwardFixture f;
  f.bp.forward.extras.lse.dtype = DType::f64;
  expect_invalid(f.bp, {"extras.lse: expected dtype f32, got f64"}, f.grads());
}

TEST_CASE("semantics/errors: backward out may be broadcast but dq may not") {
  // out is an input of the backward, so a zero stride there is legal; dq is written.
  BackwardFixture f;
  f.bp.forward.out.stride[1] = 0;
  CHECK_NOTHROW((void)validate(f.bp));
  f.bp.dq.stride[1] = 0;
  expect_invalid(f.bp, {"dq: expected strides that give every element its own address"}, f.grads());
}
