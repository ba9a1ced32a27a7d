// Validation of problems against docs/semantics.md: presence, ranks, extents, dtypes, memory
// spaces, strides and option values. Reads no tensor data except the i32 length tensors when
// they are in host memory. This file only orders the checks; the rules live by concern in the
// files that checks.hpp lists.
#include "kokkosattn/validate.hpp"

#include <string_view>
#include <vector>

#include "checks.hpp"

namespace kattn {
namespace {

using namespace validation;

// Every tensor a forward problem can carry, q first (the memory space the others must share).
std::vector<NamedTensor> forward_tensors(const ForwardProblem& p) {
  const Extras& e = p.extras;
  std::vector<NamedTensor> all = {
      {&p.q, "q"},
      {&p.k, "k"},
      {&p.v, "v"},
      {&p.out, "out"},
      {&e.lse, "extras.lse"},
      {&e.bias, "extras.bias"},
      {&e.mask, "extras.mask"},
      {&e.alibi_slopes, "extras.alibi_slopes"},
      {&e.sinks, "extras.sinks"},
      {&e.seqlens_q, "extras.seqlens_q"},
      {&e.seqlens_k, "extras.seqlens_k"},
      {&e.cu_seqlens_q, "extras.cu_seqlens_q"},
      {&e.cu_seqlens_k, "extras.cu_seqlens_k"},
      {&e.page_table, "extras.page_table"},
  };
  for (const NamedTensor& n : fp8_tensors(e.fp8))
    all.push_back(n);
  return all;
}

bool is_amax(const NamedTensor& n) {
  return std::string_view(n.name).find("amax_") != std::string_view::npos;
}

// The forward's outputs (out, extras.lse, the FP8 amax) and the rest, its inputs.
void split_forward(const std::vector<NamedTensor>& all, std::vector<NamedTensor>& outputs,
                   std::vector<NamedTensor>& inputs) {
  for (const NamedTensor& n : all) {
    const std::string_view name = n.name;
    (name == "out" || name == "extras.lse" || is_amax(n) ? outputs : inputs).push_back(n);
  }
}

Dims validate_forward(const ForwardProblem& p, bool out_is_output) {
  const std::vector<NamedTensor> all = forward_tensors(p);
  for (const NamedTensor& n : all)
    check_not_half_given(*n.t, n.name);
  check_options(p.options);
  Dims d = varlen_mode(p.extras);
  check_main_layouts(p, d);
  check_fp8_scales(p);
  main_sizes(p, d);
  check_lengths(p, d);
  if (d.paged)
    check_page_ids(p, d);
  check_extras(p, d);
  check_one_space(all);
  if (out_is_output) {
    check_no_self_alias(p.out, "out");
    if (p.extras.lse.defined())
      check_no_self_alias(p.extras.lse, "extras.lse");
    std::vector<NamedTensor> outputs, inputs;
    split_forward(all, outputs, inputs);
    check_disjoint(outputs, inputs);
  }
  resolve_options(p.options, d);
  return d;
}

} // namespace

Dims validate(const ForwardProblem& p) {
  return validate_forward(p, /*out_is_output=*/true);
}

Dims validate(const BackwardProblem& p) {
  for (const NamedTensor& n :
       {NamedTensor{&p.dout, "dout"}, NamedTensor{&p.dq, "dq"}, NamedTensor{&p.dk, "dk"},
        NamedTensor{&p.dv, "dv"}, NamedTensor{&p.dbias, "dbias"}, NamedTensor{&p.dsinks, "dsinks"}})
    check_not_half_given(*n.t, n.name);
  for (const NamedTensor& n : fp8_backward_tensors(p.fp8))
    check_not_half_given(*n.t, n.name);
  const ForwardProblem& f = p.forward;
  if (f.extras.page_table.defined())
    fail("extras.page_table: expected not given in a backward problem (a paged KV cache is "
         "forward-only: decode and prefill; pass contiguous k and v to train), got " +
         f.extras.page_table.shape_string());
  const Dims d = validate_forward(f, /*out_is_output=*/false);
  const bool fp8 = is_fp8(f.q.dtype); // gradient dtypes: check_fp8_gradient_dtypes
  check_like(p.dout, "dout", f.out, "out", !fp8);
  check_like(p.dq, "dq", f.q, "q", !fp8);
  check_like(p.dk, "dk", f.k, "k", !fp8);
  check_like(p.dv, "dv", f.v, "v", !fp8);
  if (fp8)
    check_fp8_gradient_dtypes(p);
  check_fp8_backward_scales(p);
  check_dbias(p);
  check_dsinks(p);
  check_no_self_alias(p.dq, "dq");
  check_no_self_alias(p.dk, "dk");
  check_no_self_alias(p.dv, "dv");
  if (p.dbias.defined())
    check_no_self_alias(p.dbias, "dbias");
  if (p.dsinks.defined())
    check_no_self_alias(p.dsinks, "dsinks");
  // The gradients (and their FP8 amax) are the outputs; everything the forward carries, dout and
  // the FP8 factors are inputs.
  std::vector<NamedTensor> outputs = {
      {&p.dq, "dq"}, {&p.dk, "dk"}, {&p.dv, "dv"}, {&p.dbias, "dbias"}, {&p.dsinks, "dsinks"}};
  std::vector<NamedTensor> inputs = forward_tensors(f);
  inputs.push_back({&p.dout, "dout"});
  for (const NamedTensor& n : fp8_backward_tensors(p.fp8))
    (is_amax(n) ? outputs : inputs).push_back(n);
  check_disjoint(outputs, inputs);
  return d;
}

} // namespace kattn
