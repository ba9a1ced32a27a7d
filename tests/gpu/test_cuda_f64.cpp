// The cuda backend's f64 forward (sm80's DMMA kernel, cuda/sm80/dmma_fwd_kernel.cuh) on a real
// GPU against the fp64 reference, every runtime option it serves (tolerances: BRIEF.md's rule
// with f64 baselines, gpu/device_check.hpp), and what it refuses.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <utility>

#include "common/dispatch_fixture.hpp"
#include "cuda/cuda_backend.hpp"
#include "gpu/device_check.hpp"
#include "gpu/device_forward.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

const BackendImpl& cuda_f64() {
  static const std::unique_ptr<BackendImpl> b = cuda::make_cuda_backend();
  return *b;
}

Spec f64_spec(std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K,
              std::int64_t H) {
  Spec s = spec_of(B, T, S, N, K, H, H, DType::f64);
  s.seed = static_cast<std::uint64_t>(T * 131 + S * 7 + H + N) + 6400;
  return s;
}

std::string kernel(std::int64_t H) {
  return "sm80_fwd_f64_h" + std::to_string(H);
}

// The backend's reason for refusing spec (outputs on the device, as a user's would be).
std::string refusal(const Spec& spec) {
  Attn a(spec);
  DeviceForward dev(a);
  ExecContext x;
  x.device = Device::cuda;
  const Support s = cuda_f64().supports(dev.problem, validate(dev.problem), x);
  CHECK_FALSE(s.ok);
  return s.reason;
}

} // namespace

TEST_CASE("cuda/f64: head dims 64 and 128, tails, T = 1, GQA and MQA, LSE") {
  for (std::int64_t H : {64, 128}) {
    INFO("H=", H);
    // 130 x 200: a partial 128-row block and a partial key tile; GQA 4/2.
    CHECK(check_on_device(cuda_f64(), f64_spec(2, 130, 200, 4, 2, H)) == kernel(H));
    CHECK(check_on_device(cuda_f64(), f64_spec(1, 1, 300, 4, 1, H)) == kernel(H)); // MQA, T = 1
    CHECK(check_on_device(cuda_f64(), f64_spec(1, 161, 129, 2, 2, H)) == kernel(H));
    Spec nolse = f64_spec(1, 70, 33, 2, 1, H);
    nolse.lse = false;
    CHECK(check_on_device(cuda_f64(), nolse) == kernel(H));
  }
}

TEST_CASE("cuda/f64: causal in both alignments, windows, fully masked rows") {
  for (std::int64_t H : {64, 128})
    for (auto [T, S] : {std::pair{130, 130}, std::pair{40, 150}, std::pair{150, 40}})
      for (Alignment a : {Alignment::top_left, Alignment::bottom_right}) {
        Spec s = f64_spec(1, T, S, 2, 1, H);
        s.opt.causal = true;
        s.opt.alignment = a;
        INFO("H=", H, " T=", T, " S=", S);
        CHECK(check_on_device(cuda_f64(), s) == kernel(H));
      }
  Spec w = f64_spec(1, 200, 230, 2, 1, 128);
  w.opt.window_left = 50;
  w.opt.window_right = 7;
  w.opt.alignment = Alignment::bottom_right;
  CHECK(check_on_device(cuda_f64(), w) == kernel(128));
  Spec band = f64_spec(1, 150, 150, 2, 2, 64); // rows whose window misses every key
  band.opt.window_left = 3;
  band.opt.window_right = -1;
  band.q_lens = {150};
  band.k_lens = {20};
  CHECK(check_on_device(cuda_f64(), band) == kernel(64));
}

TEST_CASE("cuda/f64: softcap, an explicit scale, outliers") {
  for (std::int64_t H : {64, 128}) {
    Spec s = f64_spec(2, 70, 90, 4, 2, H);
    s.opt.softcap = 5.0;
    s.opt.causal = true;
    CHECK(check_on_device(cuda_f64(), s) == kernel(H));
    Spec sc = f64_spec(1, 80, 80, 2, 1, H);
    sc.opt.scale = 0.3;
    sc.outliers = true;
    CHECK(check_on_device(cuda_f64(), sc) == kernel(H));
  }
}

TEST_CASE("cuda/f64: padded and packed varlen with empty sequences") {
  Spec pad = f64_spec(3, 100, 140, 2, 1, 64);
  pad.q_lens = {100, 37, 0};
  pad.k_lens = {140, 0, 65};
  CHECK(check_on_device(cuda_f64(), pad) == kernel(64));
  Spec pk = f64_spec(0, 0, 0, 2, 2, 128);
  pk.packed = true;
  pk.q_lens = {5, 0, 130, 64};
  pk.k_lens = {80, 3, 129, 0};
  CHECK(check_on_device(cuda_f64(), pk) == kernel(128));
}

TEST_CASE("cuda/f64: refusals name what is missing") {
  CHECK(refusal(f64_spec(1, 16, 24, 2, 1, 256)).find("f64: {64, 128}") != std::string::npos);
  Spec f32 = spec_of(1, 16, 24, 2, 1, 64, 64, DType::f32);
  CHECK(refusal(f32).find("dtype: expected bf16, f16 or f64 (sm80 kernels), got f32") !=
        std::string::npos);
  EnvGuard sm90("KOKKOSATTN_CUDA_KERNEL", "sm90");
  const std::string why = refusal(f64_spec(1, 16, 24, 2, 1, 64));
  INFO(why);
  CHECK((why.find("expected bf16 or f16 (sm90 kernels), got f64") != std::string::npos ||
         why.find("compute capability") != std::string::npos));
}

TEST_CASE("cuda/f64: the backward is refused by name (portable serves it)") {
  Attn a(f64_spec(1, 16, 24, 2, 1, 64));
  DeviceCopy q(a.q.view), k(a.k.view), v(a.v.view), out(a.out.view), lse(a.lse.view()),
      dout(a.dout.view), dq(a.dq.view), dk(a.dk.view), dv(a.dv.view);
  BackwardProblem b = a.backward_problem(false);
  b.forward.q = q.view(), b.forward.k = k.view(), b.forward.v = v.view();
  b.forward.out = out.view();
  b.forward.extras.lse = lse.view();
  b.dout = dout.view(), b.dq = dq.view(), b.dk = dk.view(), b.dv = dv.view();
  ExecContext x;
  x.device = Device::cuda;
  const Support s = cuda_f64().supports(b, validate(b), x);
  INFO(s.reason);
  CHECK_FALSE(s.ok);
  CHECK(s.reason.find("backward), got f64") != std::string::npos);
}
