// Validation of FP8 problems (q/k/v/out f8_e4m3 or f8_e5m2): each per-tensor factor in
// extras.fp8 is optional (a missing descale/scale means 1, a missing amax is not reported); a
// given one is f32 of shape [1] in q's memory space; none may be given for other dtypes.
// Sizes: validate_fixture.hpp.
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
