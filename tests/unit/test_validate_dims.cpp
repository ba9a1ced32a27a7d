// What validation resolves for valid problems: sizes, layout flags, the default scale and the
// window with causal folded in. These also guard the error tests: a validator that refused
// everything would pass those, not these.
#include <doctest/doctest.h>

#include <cmath>

#include "common/validate_fixture.hpp"

using namespace kattn;
using namespace kattn::test;

TEST_CASE("semantics/layout: batched problem resolves B T S N K H Hv") {
  ForwardFixture f;
  const Dims d = validate(f.p);
  CHECK(d.B == 2);
  CHECK(d.T == 6);
  CHECK(d.S == 5);
  CHECK(d.N == 4);
  CHECK(d.K == 2);
  CHECK(d.H == 8);
  CHECK(d.Hv == 3);
  CHECK_FALSE(d.packed);
  CHECK_FALSE(d.padded);
}

TEST_CASE("semantics/scale: default scale is 1/sqrt(H) and an explicit one is kept") {
  ForwardFixture f;
  CHECK(validate(f.p).scale == doctest::Approx(1.0 / std::sqrt(8.0)).epsilon(1e-15));
  f.p.options.scale = 0.3;
  CHECK(validate(f.p).scale == 0.3);
}

TEST_CASE("semantics/causal: causal folds into window_right 0") {
  ForwardFixture f;
  f.p.options.causal = true;
  f.p.options.window_left = 2;
  Dims d = validate(f.p);
  CHECK(d.window_left == 2);
  CHECK(d.window_right == 0);
  f.p.options.window_right = 0; // explicitly the same
  d = validate(f.p);
  CHECK(d.window_right == 0);
  f.p.options.causal = false;
  f.p.options.window_right = 3;
  CHECK(validate(f.p).window_right == 3);
}

TEST_CASE("semantics/packed_varlen: B and the longest sequences come from cu_seqlens") {
  PackedFixture f;
  Dims d = validate(f.p);
  CHECK(d.packed);
  CHECK_FALSE(d.padded);
  CHECK(d.B == 2);
  CHECK(d.T == 5);
  CHECK(d.S == 4);
  CHECK(d.N == 4);
  CHECK(d.K == 2);
  f.p.extras.max_seqlen_q = 7; // an upper bound the caller promises is kept
  d = validate(f.p);
  CHECK(d.T == 7);
}

TEST_CASE("semantics/packed_varlen: device-resident cu_seqlens take max_seqlen") {
  PackedFixture f;
  for (Tensor* t : {&f.p.q, &f.p.k, &f.p.v, &f.p.out, &f.p.extras.lse, &f.p.extras.cu_seqlens_q,
                    &f.p.extras.cu_seqlens_k})
    t->space = MemorySpace::hip_device;
  f.p.extras.max_seqlen_q = 6;
  f.p.extras.max_seqlen_k = 3;
  const Dims d = validate(f.p);
  CHECK(d.T == 6);
  CHECK(d.S == 3);
  CHECK(d.B == 2);
}

TEST_CASE("semantics/padded: seqlens within range and empty sequences are valid") {
  ForwardFixture f;
  HostTensor lq(DType::i32, {2}), lk(DType::i32, {2});
  lq.set_int(0, 0); // an empty query sequence: its rows give out 0, lse -inf
  lq.set_int(1, 6);
  lk.set_int(0, 5);
  lk.set_int(1, 1);
  f.p.extras.seqlens_q = lq;
  f.p.extras.seqlens_k = lk;
  const Dims d = validate(f.p);
  CHECK(d.padded);
  CHECK(d.T == 6);
  CHECK(d.S == 5);
}

TEST_CASE("semantics/bias_broadcast: bias and mask broadcast over B and N") {
  ForwardFixture f;
  HostTensor bias(DType::bf16, {1, 4, 6, 5}), mask(DType::boolean, {2, 1, 6, 5});
  HostTensor slopes(DType::f32, {2, 4});
  f.p.extras.bias = bias;
  f.p.extras.mask = mask;
  f.p.extras.alibi_slopes = slopes;
  CHECK_NOTHROW((void)validate(f.p));
}

TEST_CASE("semantics/gqa: MQA with one KV head and Hv != H are valid") {
  ForwardFixture f;
  HostTensor k(DType::f32, {2, 5, 1, 8}), v(DType::f32, {2, 5, 1, 3});
  f.p.k = k;
  f.p.v = v;
  const Dims d = validate(f.p);
  CHECK(d.K == 1);
  CHECK(d.Hv == 3);
}

TEST_CASE("semantics/strides: non-contiguous and broadcast inputs are valid") {
  // q read as a [B, N, T, H] buffer (PyTorch layout) and k broadcast over the batch.
  ForwardFixture f;
  HostTensor q_bnth(DType::f32, {2, 4, 6, 8});
  f.p.q.data = q_bnth.view().data;
  f.p.q.stride = {4 * 6 * 8, 8, 6 * 8, 1};
  f.p.k.stride[0] = 0;
  CHECK_NOTHROW((void)validate(f.p));
}

TEST_CASE("semantics/lse: lse is optional in the forward and in the backward") {
  ForwardFixture f;
  f.p.extras.lse = Tensor{};
  CHECK_NOTHROW((void)validate(f.p));
  BackwardFixture b;
  b.bp.forward.extras.lse = Tensor{};
  CHECK_NOTHROW((void)validate(b.bp));
}
