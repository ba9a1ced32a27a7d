// The cuda backend's refusals: each names what is not served, and nothing is written.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <string>

#include "gpu/test_cuda_case.hpp"
#include "kattn_cuda/flash_fwd.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/validate.hpp"

namespace {

using kattn::DType;
using kattn::test::run_cuda_case;
using kattn::test::Spec;

Spec small(DType t = DType::bf16, std::int64_t H = 64) {
  Spec s;
  s.dtype = t;
  s.B = 1, s.T = 16, s.S = 24, s.N = 2, s.K = 1, s.H = H, s.Hv = H;
  return s;
}

// Runs a refused case and checks the reason mentions `what` and outputs stay poisoned.
void check_refused(const Spec& s, const std::string& what, const char* family = "sm80") {
  const auto r = run_cuda_case(s, family);
  INFO("reason: " << r.reason);
  CHECK_FALSE(r.supported);
  CHECK(r.reason.find(what) != std::string::npos);
  CHECK(r.out_all_nan);
}

} // namespace

TEST_CASE("cuda/support: refusals name the reason, outputs untouched") {
  check_refused(small(DType::f32, 96), "f32 and f64: {64, 128}");
  check_refused(small(DType::bf16, 96), "not instantiated");
  Spec hv = small();
  hv.Hv = 128;
  check_refused(hv, "not instantiated");
  Spec bias = small();
  bias.bias = true;
  bias.bias_dtype = DType::bf16;
  check_refused(bias, "bias not implemented in the cuda backend");
  Spec mask = small();
  mask.mask = true;
  check_refused(mask, "boolean mask not implemented");
  Spec alibi = small();
  alibi.alibi = 1;
  check_refused(alibi, "ALiBi not implemented");
  Spec drop = small();
  drop.opt.dropout_p = 0.1;
  check_refused(drop, "dropout not implemented");
}

TEST_CASE("cuda/support: host memory, CPU context, backward, misaligned pointers") {
  Spec s = small();
  s.opt.backend = kattn::Backend::cuda;
  kattn::test::Attn host(s); // host memory
  kattn::ExecContext x;
  x.device = kattn::Device::cuda;
  CHECK_THROWS_WITH_AS(kattn::run_forward(kattn::default_registry(), host.forward_problem(), x),
                       doctest::Contains("cuda_device"), kattn::Unsupported);
  CHECK_THROWS_WITH_AS(
      kattn::run_forward(kattn::default_registry(), host.forward_problem(), kattn::ExecContext{}),
      doctest::Contains("CUDA execution context"), kattn::Unsupported);
  CHECK_THROWS_WITH_AS(
      kattn::run_backward(kattn::default_registry(), host.backward_problem(false), x),
      doctest::Contains("cuda_device"), kattn::Unsupported);

  // q shifted by one element: still a valid bf16 tensor, no longer 16-byte aligned (refused
  // before anything runs, so the element past the allocation is never read).
  kattn::test::DeviceCopy q(host.q.view), k(host.k.view), v(host.v.view), out(host.out.view);
  kattn::ForwardProblem p = host.forward_problem();
  p.q = q.view(), p.k = k.view(), p.v = v.view(), p.out = out.view();
  p.extras.lse = {};
  p.q.data = static_cast<char*>(p.q.data) + 2;
  kattn::test::ScopedEnv env("KOKKOSATTN_CUDA_KERNEL", "sm80");
  CHECK_THROWS_WITH_AS(kattn::run_forward(kattn::default_registry(), p, x),
                       doctest::Contains("16-byte aligned"), kattn::Unsupported);
}

TEST_CASE("cuda/support: choose_kernel names the kernel; forcing a family") {
  Spec s = small(DType::bf16, 128);
  {
    const auto r = run_cuda_case(s, "sm80");
    CHECK(r.supported);
    CHECK(r.kernel == "sm80_fwd_bf16_h128");
  }
  {
    Spec f = small(DType::f16, 256);
    const auto r = run_cuda_case(f, "sm80");
    CHECK(r.kernel == "sm80_fwd_f16_h256");
  }
  {
    const auto r = run_cuda_case(s, "sm7x");
    CHECK_FALSE(r.supported);
    CHECK(r.reason.find("expected sm80, sm90 or decode") != std::string::npos);
  }
  {
    // A head dim neither family instantiates: the forced family's name is in the reason.
    const auto r = run_cuda_case(small(DType::bf16, 96), "sm90");
    CHECK_FALSE(r.supported);
    CHECK(r.reason.find("sm90") != std::string::npos);
  }
  {
    const auto r = run_cuda_case(s, nullptr);
    MESSAGE("auto picks " << r.kernel << " for bf16 h128");
    CHECK(r.supported);
    CHECK(!r.kernel.empty());
  }
}

TEST_CASE("cuda/support: auto puts cuda first on the measured sm90 shape classes only") {
  // auto_policy.cpp's measured leads: head dim 128 causal from 4096 keys and non-causal from 8192
  // (measured faster than cuDNN); non-causal at 4096 (a tie) and causal at 2048 keep the
  // preference order.
  int dev = 0, major = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      major != 9) {
    MESSAGE("not a compute capability 9.0 GPU: the sm90 leads are not claimed here");
    return;
  }
  const auto select_for = [](const Spec& s) {
    kattn::test::Attn host(s);
    kattn::test::DeviceCopy q(host.q.view), k(host.k.view), v(host.v.view), out(host.out.view);
    kattn::ForwardProblem p = host.forward_problem();
    p.q = q.view(), p.k = k.view(), p.v = v.view(), p.out = out.view();
    p.extras.lse = {};
    kattn::ExecContext x;
    x.device = kattn::Device::cuda;
    return kattn::select(kattn::default_registry(), p, x);
  };
  Spec s = small(DType::bf16, 128);
  s.T = s.S = 8192;
  s.N = s.K = 1;
  s.lse = false;
  const auto lead = select_for(kattn::test::causal(s, kattn::Alignment::top_left));
  MESSAGE("causal h128 8192: " << lead.order_rule);
  REQUIRE(lead.impl != nullptr);
  CHECK(lead.impl->id() == kattn::Backend::cuda);
  CHECK(lead.order_rule.find("head dim 128 causal") != std::string::npos);
  const auto full = select_for(s);
  MESSAGE("h128 8192: " << full.order_rule);
  REQUIRE(full.impl != nullptr);
  CHECK(full.impl->id() == kattn::Backend::cuda);
  CHECK(full.order_rule.find("head dim 128 non-causal") != std::string::npos);
  Spec tie = s;
  tie.T = tie.S = 4096;
  CHECK(select_for(tie).order_rule.find("cuda first") == std::string::npos);
  CHECK(select_for(kattn::test::causal(tie, kattn::Alignment::top_left))
            .order_rule.find("head dim 128 causal") != std::string::npos);
  Spec shorter = kattn::test::causal(s, kattn::Alignment::top_left);
  shorter.T = shorter.S = 2048;
  CHECK(select_for(shorter).order_rule.find("cuda first") == std::string::npos);
}
