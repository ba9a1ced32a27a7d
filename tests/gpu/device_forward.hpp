// Test helper: a host test problem's forward tensors copied to the GPU (outputs as they are on
// the host: poison them first) and the forward problem pointing at the copies.
#pragma once

#include "common/reference_problem.hpp"
#include "gpu/device_buffer.hpp"

namespace kattn::test {

struct DeviceForward {
  DeviceCopy q, k, v, out, lse, seqlens_q, seqlens_k, cu_q, cu_k, bias, mask, slopes, sinks;
  ForwardProblem problem;

  explicit DeviceForward(Attn& a)
      : q(a.q.view), k(a.k.view), v(a.v.view), out(a.out.view), lse(a.lse.view()),
        seqlens_q(a.seqlens_q.view()), seqlens_k(a.seqlens_k.view()), cu_q(a.cu_q.view()),
        cu_k(a.cu_k.view()), bias(a.bias.view()), mask(a.mask.view()), slopes(a.slopes.view()),
        sinks(a.sinks.view()), problem(a.forward_problem()) {
    problem.q = q.view(), problem.k = k.view(), problem.v = v.view(), problem.out = out.view();
    problem.extras.lse = lse.view();
    problem.extras.seqlens_q = seqlens_q.view(), problem.extras.seqlens_k = seqlens_k.view();
    problem.extras.cu_seqlens_q = cu_q.view(), problem.extras.cu_seqlens_k = cu_k.view();
    // Options a backend refuses still travel in device memory, so the refusal (and not the
    // validator's memory-space rule) is what the support tests see.
    problem.extras.bias = bias.view(), problem.extras.mask = mask.view();
    problem.extras.alibi_slopes = slopes.view();
    problem.extras.sinks = sinks.view();
    if (a.spec.packed) { // device-resident cu_seqlens need the maxima
      problem.extras.max_seqlen_q = a.spec.T;
      problem.extras.max_seqlen_k = a.spec.S;
    }
  }

  // out and lse back into the host problem's buffers.
  void download() {
    out.download();
    lse.download();
  }
};

} // namespace kattn::test
