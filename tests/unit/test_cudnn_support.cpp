// The cudnn backend's host-side parts, which run without a GPU: the window translation and
// the support check's reasons for problems it must refuse before asking cuDNN. (Device tests:
// tests/gpu/.)
#include <doctest/doctest.h>

#include "common/reference_problem.hpp"
#include "cudnn/cudnn_spec.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/validate.hpp"

TEST_CASE("cudnn/window: inclusive window_left L is cuDNN's exclusive left bound L + 1") {
  using kattn::cudnn::detail::cudnn_left_bound;
  // Ours: j >= i + d - L; cuDNN's: j > i + d - W. Same key set iff W = L + 1; for every L check
  // the boundary key i + d - L is kept and i + d - L - 1 dropped by cuDNN's rule.
  for (std::int64_t L = 0; L < 50; ++L) {
    const std::int64_t W = cudnn_left_bound(L), diag = 100;
    CHECK(W == L + 1);
    CHECK(diag - L > diag - W);           // boundary key visible
    CHECK_FALSE(diag - L - 1 > diag - W); // one further left is not
  }
  CHECK(cudnn_left_bound(-1) == -1); // unbounded stays unset
}

TEST_CASE("cudnn/support: refusals named before cuDNN is asked (runs without a GPU)") {
  const kattn::BackendImpl* cudnn = kattn::default_registry().find(kattn::Backend::cudnn);
  if (cudnn == nullptr) {
    MESSAGE("cudnn backend not built (KokkosAttn_ENABLE_CUDNN=OFF): nothing to check");
    return;
  }
  CHECK(cudnn->description().find("cuDNN") == 0);
  kattn::test::Spec s;
  s.dtype = kattn::DType::bf16;
  s.H = s.Hv = 64;
  kattn::test::Attn a(s);
  const kattn::ForwardProblem p = a.forward_problem();
  kattn::ExecContext cpu;
  const kattn::Support on_cpu = cudnn->supports(p, a.dims, cpu);
  CHECK_FALSE(on_cpu.ok);
  CHECK(on_cpu.reason.find("CUDA execution context") != std::string::npos);
  kattn::ExecContext gpu;
  gpu.device = kattn::Device::cuda;
  const kattn::Support host_memory = cudnn->supports(p, a.dims, gpu);
  CHECK_FALSE(host_memory.ok);
  CHECK(host_memory.reason.find("q: expected cuda_device memory, got host") != std::string::npos);
}

TEST_CASE("cudnn/support: dropout only when cudnn is forced (its mask is cuDNN's, not ours)") {
  const kattn::BackendImpl* cudnn = kattn::default_registry().find(kattn::Backend::cudnn);
  if (cudnn == nullptr) {
    MESSAGE("cudnn backend not built (KokkosAttn_ENABLE_CUDNN=OFF): nothing to check");
    return;
  }
  kattn::test::Spec s;
  s.dtype = kattn::DType::bf16;
  s.H = s.Hv = 64;
  kattn::test::Attn a(s);
  kattn::ForwardProblem p = a.forward_problem();
  // Labelled as device memory so the check gets past the memory-space test; the support check
  // reads no tensor data (nothing here is dereferenced).
  for (kattn::Tensor* t : {&p.q, &p.k, &p.v, &p.out})
    t->space = kattn::MemorySpace::cuda_device;
  p.extras.lse = {};
  p.options.dropout_p = 0.1;
  kattn::ExecContext gpu;
  gpu.device = kattn::Device::cuda;
  const kattn::Support under_auto = cudnn->supports(p, a.dims, gpu);
  CHECK_FALSE(under_auto.ok);
  CHECK(under_auto.reason.find("dropout: cuDNN draws its own mask") != std::string::npos);
  p.options.backend = kattn::Backend::cudnn;
  // Forced, the dropout rule no longer refuses; without a GPU cuDNN's own check then refuses
  // (or throws) for its own reasons.
  std::string forced_reason;
  try {
    forced_reason = cudnn->supports(p, a.dims, gpu).reason;
  } catch (const std::exception& e) {
    forced_reason = e.what();
  }
  CHECK(forced_reason.find("dropout: cuDNN draws its own mask") == std::string::npos);
}

TEST_CASE("cudnn/support: packed varlen with every query length 1 and an LSE is refused") {
  // Regression: wrong LSE from cuDNN there on the H200 (cudnn_backend.cpp says where it was seen).
  const kattn::BackendImpl* cudnn = kattn::default_registry().find(kattn::Backend::cudnn);
  if (cudnn == nullptr) {
    MESSAGE("cudnn backend not built (KokkosAttn_ENABLE_CUDNN=OFF): nothing to check");
    return;
  }
  kattn::test::Spec s;
  s.dtype = kattn::DType::f16;
  s.N = 4, s.K = 2, s.H = s.Hv = 64;
  s.packed = true;
  s.q_lens = {1, 1};
  s.k_lens = {42, 40};
  kattn::test::Attn a(s);
  kattn::ForwardProblem p = a.forward_problem();
  for (kattn::Tensor* t :
       {&p.q, &p.k, &p.v, &p.out, &p.extras.lse, &p.extras.cu_seqlens_q, &p.extras.cu_seqlens_k})
    t->space = kattn::MemorySpace::cuda_device; // labelled only: nothing is dereferenced
  p.extras.max_seqlen_q = 1;
  p.extras.max_seqlen_k = 42;
  kattn::ExecContext gpu;
  gpu.device = kattn::Device::cuda;
  const kattn::Dims d = kattn::validate(p);
  const kattn::Support with_lse = cudnn->supports(p, d, gpu);
  CHECK_FALSE(with_lse.ok);
  CHECK(with_lse.reason.find("every query length 1 and an LSE output") != std::string::npos);
  p.extras.lse = {};
  std::string without; // without an LSE the rule does not apply (cuDNN may still refuse)
  try {
    without = cudnn->supports(p, kattn::validate(p), gpu).reason;
  } catch (const std::exception& e) {
    without = e.what();
  }
  CHECK(without.find("every query length 1") == std::string::npos);
}
