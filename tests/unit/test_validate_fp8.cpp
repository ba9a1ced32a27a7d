// Validation of FP8 problems (q/k/v/out f8_e4m3 or f8_e5m2): each per-tensor factor in
// extras.fp8 (and, for backwards, BackwardProblem::fp8) is optional (a missing descale/scale
// means 1, a missing amax is not reported); a given one is f32 of shape [1] in q's memory space;
// none may be given for other dtypes. FP8 backward gradients: dout in either FP8 format, dq/dk/dv
// one dtype (dout's format, or f16/bf16 without scale factors). Sizes: validate_fixture.hpp.
#include <doctest/doctest.h>

#include <vector>

#include "common/validate_fixture.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

// An FP8 forward with every factor given (the fixture's data stays f32 bytes: validation reads
// no tensor data).
struct Fp8Fixture : ForwardFixture {
  std::vector<HostTensor> factors;
  explicit Fp8Fixture(DType t = DType::f8_e4m3) {
    factors.reserve(8); // the views point into these buffers
    for (Tensor* x : {&p.q, &p.k, &p.v, &p.out})
      x->dtype = t;
    for (Tensor* f : members(p.extras.fp8)) {
      factors.emplace_back(DType::f32, std::vector<std::int64_t>{1});
      factors.back().fill_normal(3);
      *f = factors.back();
    }
  }
  static std::vector<Tensor*> members(Fp8Scales& s) {
    return {&s.descale_q, &s.descale_k, &s.descale_v, &s.descale_s,
            &s.scale_s,   &s.scale_o,   &s.amax_s,    &s.amax_o};
  }
};

} // namespace

TEST_CASE("validate/fp8: a complete FP8 forward passes, both formats") {
  for (DType t : {DType::f8_e4m3, DType::f8_e5m2}) {
    Fp8Fixture f(t);
    CHECK_NOTHROW((void)validate(f.p));
  }
}

TEST_CASE("validate/fp8: every factor is optional (descale/scale 1, amax not reported)") {
  Fp8Fixture f;
  f.p.extras.fp8.scale_o = {};
  f.p.extras.fp8.amax_s = {};
  CHECK_NOTHROW((void)validate(f.p));
  f.p.extras.fp8 = {};
  CHECK_NOTHROW((void)validate(f.p));
}

TEST_CASE("validate/fp8: a factor with a data pointer but no shape") {
  Fp8Fixture f;
  f.p.extras.fp8.scale_s.rank = 0;
  expect_invalid(f.p, {"extras.fp8.scale_s: expected rank > 0 for a tensor with a data pointer"},
                 f.outputs());
}

TEST_CASE("validate/fp8: a factor of the wrong shape or dtype") {
  Fp8Fixture f;
  HostTensor two(DType::f32, {2});
  two.fill_normal(4);
  f.p.extras.fp8.descale_k = two;
  expect_invalid(f.p, {"extras.fp8.descale_k: expected shape [1]", "got [2]"}, f.outputs());
  Fp8Fixture g;
  HostTensor half(DType::f16, {1});
  g.p.extras.fp8.amax_o = half;
  expect_invalid(g.p, {"extras.fp8.amax_o: expected dtype f32, got f16"}, g.outputs());
}

TEST_CASE("validate/fp8: factors are refused unless q is f8") {
  ForwardFixture f; // f32
  HostTensor one(DType::f32, {1});
  one.fill_normal(5);
  f.p.extras.fp8.descale_q = one;
  expect_invalid(f.p,
                 {"extras.fp8.descale_q: expected not given unless q is f8_e4m3 or f8_e5m2",
                  "with q of dtype f32"},
                 f.outputs());
}

TEST_CASE("validate/fp8: mixed formats and FP8 biases are refused") {
  Fp8Fixture f;
  f.p.v.dtype = DType::f8_e5m2;
  expect_invalid(f.p, {"v: expected dtype f8_e4m3 like q, got f8_e5m2"}, f.outputs());
  Fp8Fixture g;
  HostTensor bias(DType::f8_e4m3, {1, 1, Sizes::T, Sizes::S});
  g.p.extras.bias = bias;
  expect_invalid(g.p, {"extras.bias: expected a floating dtype", "got f8_e4m3"}, g.outputs());
}

TEST_CASE("validate/fp8: a factor in another memory space") {
  Fp8Fixture f;
  f.p.extras.fp8.descale_s.space = MemorySpace::cuda_device;
  expect_invalid(f.p, {"extras.fp8.descale_s: expected memory space host like q"}, f.outputs());
}

namespace {

// An FP8 backward with every forward and backward factor given: q/k/v/out in `fwd`, dout in
// `grad`, dq/dk/dv in `dq` (dout's format, or f16/bf16 without scale_dq/dk/dv).
struct Fp8BackwardFixture : BackwardFixture {
  std::vector<HostTensor> factors;
  Fp8BackwardFixture(DType fwd = DType::f8_e4m3, DType grad = DType::f8_e4m3,
                     DType dq_dtype = DType::f8_e4m3) {
    factors.reserve(20); // the views point into these buffers
    for (Tensor* x : {&bp.forward.q, &bp.forward.k, &bp.forward.v, &bp.forward.out})
      x->dtype = fwd;
    bp.dout.dtype = grad;
    for (Tensor* x : {&bp.dq, &bp.dk, &bp.dv})
      x->dtype = dq_dtype;
    std::vector<Tensor*> all = Fp8Fixture::members(bp.forward.extras.fp8);
    for (Tensor* t : members(bp.fp8))
      if (is_fp8(dq_dtype) ||
          (t != &bp.fp8.scale_dq && t != &bp.fp8.scale_dk && t != &bp.fp8.scale_dv))
        all.push_back(t);
    for (Tensor* f : all) {
      factors.emplace_back(DType::f32, std::vector<std::int64_t>{1});
      factors.back().fill_normal(7);
      *f = factors.back();
    }
  }
  static std::vector<Tensor*> members(Fp8BackwardScales& s) {
    return {&s.descale_o, &s.descale_dout, &s.descale_dp, &s.scale_dp, &s.scale_dq, &s.scale_dk,
            &s.scale_dv,  &s.amax_dq,      &s.amax_dk,    &s.amax_dv,  &s.amax_dp};
  }
  // Gradients and the amax outputs: validation must leave them untouched.
  std::vector<const HostTensor*> outputs() const {
    std::vector<const HostTensor*> o = grads();
    for (const HostTensor& f : factors)
      o.push_back(&f);
    return o;
  }
};

} // namespace

TEST_CASE("validate/fp8: a complete FP8 backward passes (e4m3, e5m2, e4m3 forward + e5m2 grads)") {
  struct C {
    DType fwd, grad;
  };
  for (C c : {C{DType::f8_e4m3, DType::f8_e4m3}, C{DType::f8_e5m2, DType::f8_e5m2},
              C{DType::f8_e4m3, DType::f8_e5m2}, C{DType::f8_e5m2, DType::f8_e4m3}}) {
    Fp8BackwardFixture f(c.fwd, c.grad, c.grad);
    CHECK_NOTHROW((void)validate(f.bp));
  }
}

TEST_CASE("validate/fp8: FP8 backward with f16/bf16 dq/dk/dv passes (no scale_dq/dk/dv)") {
  for (DType g : {DType::bf16, DType::f16}) {
    Fp8BackwardFixture f(DType::f8_e4m3, DType::f8_e5m2, g);
    CHECK_NOTHROW((void)validate(f.bp));
  }
}

TEST_CASE("validate/fp8: every backward factor is optional") {
  Fp8BackwardFixture f;
  f.bp.fp8 = {};
  CHECK_NOTHROW((void)validate(f.bp));
  f.bp.forward.extras.fp8 = {};
  CHECK_NOTHROW((void)validate(f.bp));
}

TEST_CASE("validate/fp8: backward dout must be FP8 with FP8 q") {
  Fp8BackwardFixture f;
  f.bp.dout.dtype = DType::bf16;
  expect_invalid(
      f.bp,
      {"dout: expected dtype f8_e4m3 or f8_e5m2 with q of dtype f8_e4m3 (FP8 backward), got bf16"},
      f.outputs());
}

TEST_CASE("validate/fp8: backward dq in the other FP8 format than dout, or in f32") {
  Fp8BackwardFixture f(DType::f8_e4m3, DType::f8_e5m2, DType::f8_e5m2);
  for (Tensor* t : {&f.bp.dq, &f.bp.dk, &f.bp.dv})
    t->dtype = DType::f8_e4m3;
  expect_invalid(f.bp,
                 {"dq: expected dtype f8_e5m2 like dout, or f16 / bf16 (FP8 backward gradients), "
                  "got f8_e4m3"},
                 f.outputs());
  Fp8BackwardFixture g(DType::f8_e4m3, DType::f8_e5m2, DType::bf16);
  g.bp.dq.dtype = DType::f32;
  expect_invalid(g.bp, {"dq: expected dtype f8_e5m2 like dout", "got f32"}, g.outputs());
}

TEST_CASE("validate/fp8: backward dk and dv must share dq's dtype") {
  Fp8BackwardFixture f(DType::f8_e4m3, DType::f8_e5m2, DType::bf16);
  f.bp.dk.dtype = DType::f16;
  expect_invalid(f.bp, {"dk: expected dtype bf16 like dq, got f16"}, f.outputs());
  Fp8BackwardFixture g;
  g.bp.dv.dtype = DType::f8_e5m2;
  expect_invalid(g.bp, {"dv: expected dtype f8_e4m3 like dq, got f8_e5m2"}, g.outputs());
}

TEST_CASE("validate/fp8: FP8 backward gradients keep their shape checks") {
  Fp8BackwardFixture f;
  f.bp.dq.extent[3] = 4;
  expect_invalid(f.bp, {"dq: expected shape [2, 6, 4, 8] like q, got [2, 6, 4, 4]"}, f.outputs());
}

TEST_CASE("validate/fp8: a backward factor of the wrong shape, dtype or memory space") {
  Fp8BackwardFixture f;
  HostTensor two(DType::f32, {2});
  two.fill_normal(4);
  f.bp.fp8.scale_dp = two;
  expect_invalid(f.bp, {"fp8.scale_dp: expected shape [1] (one per-tensor factor), got [2]"},
                 f.outputs());
  Fp8BackwardFixture g;
  HostTensor half(DType::f16, {1});
  g.bp.fp8.amax_dq = half;
  expect_invalid(g.bp, {"fp8.amax_dq: expected dtype f32, got f16"}, g.outputs());
  Fp8BackwardFixture h;
  h.bp.fp8.descale_dout.space = MemorySpace::cuda_device;
  expect_invalid(h.bp, {"fp8.descale_dout: expected memory space host like q, got cuda_device"},
                 h.outputs());
}

TEST_CASE("validate/fp8: a backward factor with a data pointer but no shape") {
  Fp8BackwardFixture f;
  f.bp.fp8.amax_dp.rank = 0;
  expect_invalid(f.bp, {"fp8.amax_dp: expected rank > 0 for a tensor with a data pointer"},
                 f.outputs());
}

TEST_CASE("validate/fp8: backward factors are refused unless q is f8") {
  BackwardFixture f; // f32
  HostTensor one(DType::f32, {1});
  one.fill_normal(5);
  f.bp.fp8.descale_o = one;
  expect_invalid(f.bp,
                 {"fp8.descale_o: expected not given unless q is f8_e4m3 or f8_e5m2, got [1] "
                  "with q of dtype f32"},
                 f.grads());
}

TEST_CASE("validate/fp8: scale_dq/dk/dv are refused with f16/bf16 gradients") {
  Fp8BackwardFixture f(DType::f8_e4m3, DType::f8_e5m2, DType::bf16);
  HostTensor one(DType::f32, {1});
  one.fill_normal(6);
  f.bp.fp8.scale_dk = one;
  expect_invalid(f.bp,
                 {"fp8.scale_dk: expected not given with dq of dtype bf16 (f16 / bf16 gradients "
                  "are not scaled), got [1]"},
                 f.outputs());
}
