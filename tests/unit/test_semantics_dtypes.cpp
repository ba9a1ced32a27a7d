// Semantics rule dtypes (docs/semantics.md) on the reference backend: outputs are the fp64
// result of the (already rounded) inputs, rounded once to the output dtype. The reference and
// the oracle agree to ~1e-15 relative, far below half an ulp of f32 (6e-8), so the rounded
// values are expected to be bit-identical (inputs are fixed, so this cannot flake).
#include <doctest/doctest.h>

#include "common/oracle_attention.hpp"
#include "common/reference_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
// v rounded to dtype t (through the same store path the outputs use).
std::vector<double> rounded(const std::vector<double>& v, DType t) {
  HostTensor h(t, {static_cast<std::int64_t>(v.size())});
  for (std::size_t i = 0; i < v.size(); ++i)
    h.set(static_cast<std::int64_t>(i), v[i]);
  return h.to_doubles();
}

void outputs_are_rounded_fp64(DType t) {
  Spec s = spec_of(2, 7, 9, 4, 2, 16, 8);
  s.dtype = t;
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  s.bias = true;
  s.bias_dtype = DType::f32;
  Attn a(s);
  a.forward();
  a.backward();
  const OracleResult o = oracle(a);
  CHECK(a.out.view.dtype == t);
  CHECK(max_abs_diff(a.out_values(), rounded(o.out, t)) == 0.0);
  CHECK(max_abs_diff(a.lse_values(), rounded(o.lse, DType::f32)) == 0.0);
  CHECK(max_abs_diff(read_logical(a.dq.view), rounded(o.dq, t)) == 0.0);
  CHECK(max_abs_diff(read_logical(a.dk.view), rounded(o.dk, t)) == 0.0);
  CHECK(max_abs_diff(read_logical(a.dv.view), rounded(o.dv, t)) == 0.0);
  CHECK(max_abs_diff(a.dbias.to_doubles(), rounded(o.dbias, DType::f32)) == 0.0);
  // The rounding is real: the fp64 values are not representable in the output dtype.
  CHECK(max_abs_diff(a.out_values(), o.out) > 0.0);
}
} // namespace

TEST_CASE("semantics/dtypes: fp16 outputs and gradients are the rounded fp64 result") {
  outputs_are_rounded_fp64(DType::f16);
}
TEST_CASE("semantics/dtypes: bf16 outputs and gradients are the rounded fp64 result") {
  outputs_are_rounded_fp64(DType::bf16);
}
TEST_CASE("semantics/dtypes: f32 outputs and gradients are the rounded fp64 result") {
  outputs_are_rounded_fp64(DType::f32);
}

TEST_CASE("semantics/dtypes: f16 inputs are read exactly (no rounding beyond the input's own)") {
  // The same values as f16 and as f64 give identical fp64 results before output rounding:
  // compare the f64 run's output, rounded to f16, with the f16 run's output.
  Spec s = spec_of(1, 5, 6, 2, 1, 8, 8);
  s.dtype = DType::f16;
  Attn h(s);
  s.dtype = DType::f64;
  Attn d(s);
  write_logical(d.q.view, read_logical(h.q.view));
  write_logical(d.k.view, read_logical(h.k.view));
  write_logical(d.v.view, read_logical(h.v.view));
  h.forward();
  d.forward();
  CHECK(max_abs_diff(h.out_values(), rounded(d.out_values(), DType::f16)) == 0.0);
}

TEST_CASE("semantics/dtypes: the bias may have its own float dtype") {
  for (DType bt : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    Spec s = spec_of(1, 4, 5, 2, 1, 8, 8);
    s.dtype = DType::f32;
    s.bias = true;
    s.bias_dtype = bt;
    Attn a(s);
    a.forward();
    a.backward();
    const OracleResult o = oracle(a);
    CAPTURE(to_string(bt));
    CHECK(max_abs_diff(a.out_values(), rounded(o.out, DType::f32)) == 0.0);
    // An f64 dbias is not rounded at all: reference and oracle differ by summation order.
    CHECK(max_abs_diff(a.dbias.to_doubles(), rounded(o.dbias, bt)) <=
          (bt == DType::f64 ? 1e-13 : 0.0));
  }
}
