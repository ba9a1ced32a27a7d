// The cuda backend's host-side support check, which runs without a GPU: every refusal it makes
// before asking the kernels (supports() must not touch tensor data, so host buffers relabelled
// as cuda_device stand in for device memory). Device tests: tests/gpu/test_cuda_*.cpp.
#include <doctest/doctest.h>

#include <string>

#include "common/reference_problem.hpp"
#include "kokkosattn/dispatch.hpp"

namespace {

using kattn::test::Attn;
using kattn::test::Spec;

const kattn::BackendImpl* cuda_backend() {
  return kattn::default_registry().find(kattn::Backend::cuda);
}

Spec bf16_spec() {
  Spec s;
  s.dtype = kattn::DType::bf16;
  s.H = s.Hv = 64;
  return s;
}

// The problem with every tensor relabelled as device memory.
kattn::ForwardProblem on_device(const Attn& a) {
  kattn::ForwardProblem p = a.forward_problem();
  for (kattn::Tensor* t : {&p.q, &p.k, &p.v, &p.out, &p.extras.lse, &p.extras.bias, &p.extras.mask,
                           &p.extras.alibi_slopes})
    t->space = kattn::MemorySpace::cuda_device;
  return p;
}

std::string reason(const Spec& s, kattn::Device dev = kattn::Device::cuda) {
  Attn a(s);
  kattn::ExecContext x;
  x.device = dev;
  const kattn::Support r = cuda_backend()->supports(on_device(a), a.dims, x);
  CHECK_FALSE(r.ok);
  return r.reason;
}

bool has(const std::string& text, const char* what) {
  return text.find(what) != std::string::npos;
}

} // namespace

TEST_CASE("cuda/support: refusals named before the kernels are asked (runs without a GPU)") {
  if (cuda_backend() == nullptr) {
    MESSAGE("cuda backend not built (KokkosAttn_ENABLE_CUDA=OFF): nothing to check");
    return;
  }
  CHECK(cuda_backend()->description().find("hand-written flash attention") != std::string::npos);
  const Spec s = bf16_spec();
  CHECK(has(reason(s, kattn::Device::cpu), "CUDA execution context"));
  {
    Attn a(s); // host memory as it is
    kattn::ExecContext x;
    x.device = kattn::Device::cuda;
    const kattn::Support r = cuda_backend()->supports(a.forward_problem(), a.dims, x);
    CHECK_FALSE(r.ok);
    CHECK(has(r.reason, "q: expected cuda_device memory, got host"));
  }
  Spec bias = s;
  bias.bias = true;
  bias.bias_dtype = kattn::DType::bf16;
  CHECK(has(reason(bias), "additive bias not implemented in the cuda backend"));
  Spec mask = s;
  mask.mask = true;
  CHECK(has(reason(mask), "boolean mask not implemented in the cuda backend"));
  Spec alibi = s;
  alibi.alibi = 1;
  CHECK(has(reason(alibi), "ALiBi not implemented in the cuda backend"));
  Spec drop = s;
  drop.opt.dropout_p = 0.2;
  CHECK(has(reason(drop), "dropout not implemented in the cuda backend"));
  {
    Attn a(s);
    kattn::ForwardProblem p = on_device(a);
    p.q.stride[3] = 2; // head dim not contiguous
    kattn::ExecContext x;
    x.device = kattn::Device::cuda;
    const kattn::Support r = cuda_backend()->supports(p, a.dims, x);
    CHECK_FALSE(r.ok);
    CHECK(has(r.reason, "q: expected head-dim stride 1, got 2"));
  }
  {
    // The backward's own refusals, each before any kernel is asked.
    Spec lse = s;
    lse.lse = true;
    Attn a(lse);
    auto bwd_reason = [&](auto&& change) {
      kattn::BackwardProblem b = a.backward_problem(false);
      b.forward = on_device(a);
      for (kattn::Tensor* t : {&b.dout, &b.dq, &b.dk, &b.dv})
        t->space = kattn::MemorySpace::cuda_device;
      change(b);
      kattn::ExecContext x;
      x.device = kattn::Device::cuda;
      const kattn::Support r = cuda_backend()->supports(b, a.dims, x);
      CHECK_FALSE(r.ok);
      return r.reason;
    };
    CHECK(has(bwd_reason([](kattn::BackwardProblem& b) { b.forward.extras.lse = {}; }),
              "extras.lse: expected the forward's LSE"));
    CHECK(has(bwd_reason([](kattn::BackwardProblem& b) { b.dq.space = kattn::MemorySpace::host; }),
              "dq: expected cuda_device memory, got host"));
    CHECK(has(bwd_reason([](kattn::BackwardProblem& b) { b.dk.dtype = kattn::DType::f16; }),
              "dk: expected the dtype of q (bf16), got f16"));
    CHECK(has(bwd_reason([](kattn::BackwardProblem& b) { b.dv.stride[3] = 2; }),
              "dv: expected head-dim stride 1, got 2"));
  }
}
