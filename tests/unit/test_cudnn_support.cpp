// The cudnn backend's host-side parts, which run without a GPU: the window translation and
// the support check's reasons for problems it must refuse before asking cuDNN. (Device tests:
// tests/gpu/.)
#include <doctest/doctest.h>

#include <string>
#include <vector>

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

TEST_CASE("cudnn/support: packed varlen with longest query 1 and an LSE: served when every "
          "sequence has its query, refused with an empty one") {
  // Issue 20 item 9: cuDNN's LSE through ragged Stats offsets was wrong there on the H200; the
  // backend now gives Stats no ragged offsets when every length is 1 (cudnn_spec.cpp), which
  // cannot address a batch with empty sequences.
  const kattn::BackendImpl* cudnn = kattn::default_registry().find(kattn::Backend::cudnn);
  if (cudnn == nullptr) {
    MESSAGE("cudnn backend not built (KokkosAttn_ENABLE_CUDNN=OFF): nothing to check");
    return;
  }
  const auto reason = [&](std::vector<std::int64_t> q_lens, std::vector<std::int64_t> k_lens) {
    kattn::test::Spec s;
    s.dtype = kattn::DType::f16;
    s.N = 4, s.K = 2, s.H = s.Hv = 64;
    s.packed = true;
    s.q_lens = std::move(q_lens);
    s.k_lens = std::move(k_lens);
    kattn::test::Attn a(s);
    kattn::ForwardProblem p = a.forward_problem();
    for (kattn::Tensor* t :
         {&p.q, &p.k, &p.v, &p.out, &p.extras.lse, &p.extras.cu_seqlens_q, &p.extras.cu_seqlens_k})
      t->space = kattn::MemorySpace::cuda_device; // labelled only: nothing is dereferenced
    p.extras.max_seqlen_q = 1;
    p.extras.max_seqlen_k = 42;
    kattn::ExecContext gpu;
    gpu.device = kattn::Device::cuda;
    try { // (without a GPU cuDNN itself refuses later, for another reason)
      return cudnn->supports(p, kattn::validate(p), gpu).reason;
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  };
  CHECK(reason({1, 1}, {42, 40}).find("query lengths of 0 and 1") == std::string::npos);
  CHECK(reason({1, 0, 1}, {42, 40, 3}).find("query lengths of 0 and 1 only, some 0, and an LSE") !=
        std::string::npos);
}
