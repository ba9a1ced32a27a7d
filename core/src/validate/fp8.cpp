// FP8: the per-tensor scaling factors of Fp8Scales / Fp8BackwardScales (f32 [1], each optional)
// and the dtypes of an FP8 backward's gradients. Problems that are not FP8 carry no factors.
#include "checks.hpp"

namespace kattn::validation {
namespace {

// FP8 problems may carry per-tensor factors, each optional, f32 [1] (with `in_q_space`, in q's
// memory space); other problems carry none.
void check_factors(const std::vector<NamedTensor>& factors, const Tensor& q, bool in_q_space) {
  for (const NamedTensor& n : factors) {
    if (!n.t->defined())
      continue; // optional: a missing descale/scale is 1, a missing amax is not reported
    if (!is_fp8(q.dtype))
      fail(std::string(n.name) + ": expected not given unless q is f8_e4m3 or f8_e5m2, got " +
           n.t->shape_string() + " with q of dtype " + str(q.dtype));
    if (n.t->rank != 1 || ext(*n.t, 0) != 1)
      fail(std::string(n.name) + ": expected shape [1] (one per-tensor factor), got " +
           shape_of(*n.t));
    check_storage(*n.t, n.name, {"1"});
    expect_dtype(*n.t, n.name, DType::f32, "");
    if (in_q_space)
      expect_space(*n.t, n.name, q.space, "q");
  }
}

} // namespace

std::vector<NamedTensor> fp8_tensors(const Fp8Scales& f) {
  return {{&f.descale_q, "extras.fp8.descale_q"}, {&f.descale_k, "extras.fp8.descale_k"},
          {&f.descale_v, "extras.fp8.descale_v"}, {&f.descale_s, "extras.fp8.descale_s"},
          {&f.scale_s, "extras.fp8.scale_s"},     {&f.scale_o, "extras.fp8.scale_o"},
          {&f.amax_s, "extras.fp8.amax_s"},       {&f.amax_o, "extras.fp8.amax_o"}};
}

std::vector<NamedTensor> fp8_backward_tensors(const Fp8BackwardScales& f) {
  return {{&f.descale_o, "fp8.descale_o"},   {&f.descale_dout, "fp8.descale_dout"},
          {&f.descale_dp, "fp8.descale_dp"}, {&f.scale_dp, "fp8.scale_dp"},
          {&f.scale_dq, "fp8.scale_dq"},     {&f.scale_dk, "fp8.scale_dk"},
          {&f.scale_dv, "fp8.scale_dv"},     {&f.amax_dq, "fp8.amax_dq"},
          {&f.amax_dk, "fp8.amax_dk"},       {&f.amax_dv, "fp8.amax_dv"},
          {&f.amax_dp, "fp8.amax_dp"}};
}

// The forward's factors (extras.fp8; amax_s and amax_o are outputs). Their memory spaces are
// checked with the other tensors (check_one_space).
void check_fp8_scales(const ForwardProblem& p) {
  check_factors(fp8_tensors(p.extras.fp8), p.q, /*in_q_space=*/false);
}

// FP8 backward gradients: dout in either FP8 format (TransformerEngine's HYBRID recipe pairs an
// e4m3 forward with e5m2 gradients); dq, dk, dv share one dtype, dout's format or f16 / bf16.
void check_fp8_gradient_dtypes(const BackwardProblem& p) {
  const DType q = p.forward.q.dtype;
  if (!is_fp8(p.dout.dtype))
    fail("dout: expected dtype f8_e4m3 or f8_e5m2 with q of dtype " + str(q) +
         " (FP8 backward), got " + str(p.dout.dtype));
  const DType g = p.dq.dtype;
  if (g != p.dout.dtype && g != DType::f16 && g != DType::bf16)
    fail("dq: expected dtype " + str(p.dout.dtype) +
         " like dout, or f16 / bf16 (FP8 backward gradients), got " + str(g));
  expect_dtype(p.dk, "dk", g, "dq");
  expect_dtype(p.dv, "dv", g, "dq");
}

// The FP8 backward's factors (amax_* are outputs), in q's memory space; no scale_dq/dk/dv for
// f16/bf16 gradients (they are not scaled).
void check_fp8_backward_scales(const BackwardProblem& p) {
  const Fp8BackwardScales& f = p.fp8;
  const std::vector<NamedTensor> factors = fp8_backward_tensors(f);
  check_factors(factors, p.forward.q, /*in_q_space=*/true);
  if (!is_fp8(p.forward.q.dtype) || is_fp8(p.dq.dtype))
    return;
  for (const NamedTensor& n : factors)
    if (n.t->defined() && (n.t == &f.scale_dq || n.t == &f.scale_dk || n.t == &f.scale_dv))
      fail(std::string(n.name) + ": expected not given with dq of dtype " + str(p.dq.dtype) +
           " (f16 / bf16 gradients are not scaled), got " + n.t->shape_string());
}

} // namespace kattn::validation
