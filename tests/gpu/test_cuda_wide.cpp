// The cuda backend's f32 and f64 forward (sm80's kernel for them, cuda/sm80/wide_fwd_kernel.cuh:
// 3xTF32, TF32 with options.allow_tf32, and f64 tensor-core products; on Hopper sm90's 3xTF32
// wgmma kernel at head dim 128, cuda/sm90/f32_*.cuh) on a real GPU against the
// fp64 reference, every runtime option it serves (tolerances: BRIEF.md's rule with same-precision
// baselines, gpu/device_check.hpp), and what it refuses.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/dispatch_fixture.hpp"
#include "cuda/cuda_backend.hpp"
#include "gpu/device_check.hpp"
#include "gpu/device_forward.hpp"
#include "gpu/on_sm90.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

const BackendImpl& cuda_backend() {
  static const std::unique_ptr<BackendImpl> b = cuda::make_cuda_backend();
  return *b;
}

constexpr DType wide_types[] = {DType::f32, DType::f64};

Spec wide_spec(DType t, std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N,
               std::int64_t K, std::int64_t H) {
  Spec s = spec_of(B, T, S, N, K, H, H, t);
  s.seed = static_cast<std::uint64_t>(T * 131 + S * 7 + H + N) + 6400;
  return s;
}

// The kernel the backend names: f32 with its precision mode.
std::string kernel(DType t, std::int64_t H, bool tf32 = false) {
  const char* mode = t == DType::f64 ? "f64" : tf32 ? "f32_tf32" : "f32_3xtf32";
  return std::string("sm80_fwd_") + mode + "_h" + std::to_string(H);
}

// x rounded to TF32 as cvt.rna.tf32.f32 does (nearest, ties away from zero: 10 mantissa bits).
float round_tf32(float x) {
  if (!std::isfinite(x))
    return x;
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u = (u + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

void round_to_tf32(const Tensor& t) {
  std::vector<double> x = read_logical(t);
  for (double& e : x)
    e = round_tf32(static_cast<float>(e));
  write_logical(t, x);
}

// The TF32 kernel on inputs already in TF32 (q, k, v rounded here, so the reference sees what
// the MMAs see): what is left is P rounded to TF32 for P.V (2^-11 relative per weight, against
// an unrounded row sum), so an output moves by at most 2^-11 sum_j p_j |v_j| <= 2^-11 max|v|
// beyond the fp32 rule; the LSE (scores and sums in fp32 on exact operands) stays in the rule.
std::string check_tf32(const Spec& spec) {
  Spec s = spec;
  s.opt.allow_tf32 = true;
  Attn a(s);
  for (const Tensor* t : {&a.q.view, &a.k.view, &a.v.view})
    round_to_tf32(*t);
  return check_attn_on_device(cuda_backend(), a, std::ldexp(max_abs(read_logical(a.v.view)), -11));
}

// The cuda forward's output of spec on the device, allow_tf32 as given.
std::vector<double> device_out(const Spec& spec, bool tf32) {
  Spec s = spec;
  s.opt.allow_tf32 = tf32;
  Attn a(s);
  run_on_device(cuda_backend(), a);
  return a.out_values();
}

// The 3xTF32 products' extra error, for inputs with outliers. A split product carries up to
// 2^-21 |q||k| (wide_math.cuh) against fp32's 2^-24: on N(0,1) inputs the kernel's error stays
// within the same-precision rule (2x naive's fp32 error plus the floor; H200: at most 0.79x of it),
// but with outliers (scale 0.3) the products' error dominates: 1.9-2.1x naive's error, 0.92x
// and 1.04x the rule at H = 64 and 128. Bound: a score moves by at most
// 2^-21 scale sum_h max|q_h| max|k_h|, which moves an output row by at most twice that times
// max|v|.
double split_bound(const Spec& spec) {
  Attn a(spec);
  const std::vector<double> q = read_logical(a.q.view), k = read_logical(a.k.view),
                            v = read_logical(a.v.view);
  const std::size_t H = static_cast<std::size_t>(spec.H);
  std::vector<double> mq(H, 0.0), mk(H, 0.0);
  for (std::size_t i = 0; i < q.size(); ++i)
    mq[i % H] = std::max(mq[i % H], std::abs(q[i]));
  for (std::size_t i = 0; i < k.size(); ++i)
    mk[i % H] = std::max(mk[i % H], std::abs(k[i]));
  double dot = 0.0;
  for (std::size_t h = 0; h < H; ++h)
    dot += mq[h] * mk[h];
  const double scale = spec.opt.scale ? *spec.opt.scale : 1.0 / std::sqrt(double(spec.H));
  return 2 * std::ldexp(scale * dot, -21) * max_abs(v);
}

// The backend's reason for refusing spec (outputs on the device, as a user's would be).
std::string refusal(const Spec& spec) {
  Attn a(spec);
  DeviceForward dev(a);
  ExecContext x;
  x.device = Device::cuda;
  const Support s = cuda_backend().supports(dev.problem, validate(dev.problem), x);
  CHECK_FALSE(s.ok);
  return s.reason;
}

} // namespace

TEST_CASE("cuda/wide: f32 and f64, head dims 64 and 128, tails, T = 1, GQA and MQA, LSE") {
  for (DType t : wide_types)
    for (std::int64_t H : {64, 128}) {
      INFO(to_string(t), " H=", H);
      // 130 x 200: a partial 128-row block and a partial key tile; GQA 4/2.
      CHECK(check_on_device(cuda_backend(), wide_spec(t, 2, 130, 200, 4, 2, H)) == kernel(t, H));
      // MQA, T = 1
      CHECK(check_on_device(cuda_backend(), wide_spec(t, 1, 1, 300, 4, 1, H)) == kernel(t, H));
      CHECK(check_on_device(cuda_backend(), wide_spec(t, 1, 161, 129, 2, 2, H)) == kernel(t, H));
      Spec nolse = wide_spec(t, 1, 70, 33, 2, 1, H);
      nolse.lse = false;
      CHECK(check_on_device(cuda_backend(), nolse) == kernel(t, H));
    }
}

TEST_CASE("cuda/wide: causal in both alignments, windows, fully masked rows") {
  for (DType t : wide_types) {
    for (std::int64_t H : {64, 128})
      for (auto [T, S] : {std::pair{130, 130}, std::pair{40, 150}, std::pair{150, 40}})
        for (Alignment a : {Alignment::top_left, Alignment::bottom_right}) {
          Spec s = wide_spec(t, 1, T, S, 2, 1, H);
          s.opt.causal = true;
          s.opt.alignment = a;
          INFO(to_string(t), " H=", H, " T=", T, " S=", S);
          CHECK(check_on_device(cuda_backend(), s) == kernel(t, H));
        }
    Spec w = wide_spec(t, 1, 200, 230, 2, 1, 128);
    w.opt.window_left = 50;
    w.opt.window_right = 7;
    w.opt.alignment = Alignment::bottom_right;
    CHECK(check_on_device(cuda_backend(), w) == kernel(t, 128));
    Spec band = wide_spec(t, 1, 150, 150, 2, 2, 64); // rows whose window misses every key
    band.opt.window_left = 3;
    band.opt.window_right = -1;
    band.q_lens = {150};
    band.k_lens = {20};
    CHECK(check_on_device(cuda_backend(), band) == kernel(t, 64));
  }
}

TEST_CASE("cuda/wide: softcap, an explicit scale, outliers") {
  for (DType t : wide_types)
    for (std::int64_t H : {64, 128}) {
      INFO(to_string(t), " H=", H);
      Spec s = wide_spec(t, 2, 70, 90, 4, 2, H);
      s.opt.softcap = 5.0;
      s.opt.causal = true;
      CHECK(check_on_device(cuda_backend(), s) == kernel(t, H));
      Spec sc = wide_spec(t, 1, 80, 80, 2, 1, H);
      sc.opt.scale = 0.3;
      sc.outliers = true;
      const double extra = t == DType::f32 ? split_bound(sc) : 0.0;
      INFO("3xTF32 bound ", extra);
      CHECK(check_on_device(cuda_backend(), sc, extra) == kernel(t, H));
    }
}

TEST_CASE("cuda/wide: padded and packed varlen with empty sequences") {
  for (DType t : wide_types) {
    Spec pad = wide_spec(t, 3, 100, 140, 2, 1, 64);
    pad.q_lens = {100, 37, 0};
    pad.k_lens = {140, 0, 65};
    CHECK(check_on_device(cuda_backend(), pad) == kernel(t, 64));
    Spec pk = wide_spec(t, 0, 0, 0, 2, 2, 128);
    pk.packed = true;
    pk.q_lens = {5, 0, 130, 64};
    pk.k_lens = {80, 3, 129, 0};
    CHECK(check_on_device(cuda_backend(), pk) == kernel(t, 128));
  }
}

TEST_CASE("cuda/wide: allow_tf32, every option, against the reference of the TF32 inputs") {
  for (std::int64_t H : {64, 128}) {
    INFO("H=", H);
    CHECK(check_tf32(wide_spec(DType::f32, 2, 130, 200, 4, 2, H)) == kernel(DType::f32, H, true));
    CHECK(check_tf32(wide_spec(DType::f32, 1, 1, 300, 4, 1, H)) == kernel(DType::f32, H, true));
    Spec c = wide_spec(DType::f32, 1, 150, 40, 2, 1, H);
    c.opt.causal = true;
    c.opt.alignment = Alignment::bottom_right;
    CHECK(check_tf32(c) == kernel(DType::f32, H, true));
    Spec cap = wide_spec(DType::f32, 2, 70, 90, 4, 2, H);
    cap.opt.softcap = 5.0;
    cap.opt.window_left = 20;
    CHECK(check_tf32(cap) == kernel(DType::f32, H, true));
  }
  Spec pad = wide_spec(DType::f32, 3, 100, 140, 2, 1, 64);
  pad.q_lens = {100, 37, 0};
  pad.k_lens = {140, 0, 65};
  CHECK(check_tf32(pad) == kernel(DType::f32, 64, true));
  // f64 ignores the permission.
  Spec f64 = wide_spec(DType::f64, 1, 70, 90, 2, 1, 64);
  f64.opt.allow_tf32 = true;
  CHECK(check_on_device(cuda_backend(), f64) == kernel(DType::f64, 64));
}

TEST_CASE("cuda/wide: allow_tf32 runs TF32 products (not the 3xTF32 split)") {
  // On unrounded inputs the two modes differ by the operands' TF32 rounding: a TF32 score moves by
  // ~2^-11 |q||k| per product, ~1e3 times the split's 2^-21. A kernel that ignored the flag would
  // match the split's output to ~1e-6.
  for (std::int64_t H : {64, 128}) {
    const Spec s = wide_spec(DType::f32, 1, 128, 256, 2, 1, H);
    const std::vector<double> split = device_out(s, false), tf32 = device_out(s, true);
    REQUIRE(all_finite(split));
    REQUIRE(all_finite(tf32));
    const double diff = max_abs_diff(split, tf32);
    INFO("H=", H, " max |tf32 - 3xtf32| = ", diff);
    CHECK(diff > 1e-5);
    CHECK(diff < 2e-2);
  }
}

// The sm90 exact-fp32 kernel (cuda/sm90/f32_*.cuh; forced: auto takes it from T, S >= 2048 only):
// the cases above at head dim 128 that it serves, same references and bounds.
constexpr const char* sm90_f32 = "sm90_fwd_f32_3xtf32_h128";

#define KATTN_REQUIRE_SM90_F32()                                                                   \
  if (!on_sm90()) {                                                                                \
    MESSAGE("not a compute capability 9.0 GPU: the sm90 fp32 kernel is not run");                  \
    return;                                                                                        \
  }                                                                                                \
  EnvGuard force_sm90("KOKKOSATTN_CUDA_KERNEL", "sm90")

TEST_CASE("cuda/sm90 f32: tails, T = 1, GQA and MQA, LSE, causal, windows, empty rows") {
  KATTN_REQUIRE_SM90_F32();
  const DType f = DType::f32;
  CHECK(check_on_device(cuda_backend(), wide_spec(f, 2, 130, 200, 4, 2, 128)) == sm90_f32);
  CHECK(check_on_device(cuda_backend(), wide_spec(f, 1, 1, 300, 4, 1, 128)) == sm90_f32);
  CHECK(check_on_device(cuda_backend(), wide_spec(f, 1, 161, 129, 2, 2, 128)) == sm90_f32);
  CHECK(check_on_device(cuda_backend(), wide_spec(f, 1, 7, 5, 2, 1, 128)) == sm90_f32);
  // More work items (192 pairs of query blocks) than SMs: CTAs run several tiles in turn.
  CHECK(check_on_device(cuda_backend(), wide_spec(f, 4, 300, 257, 16, 4, 128)) == sm90_f32);
  Spec nolse = wide_spec(f, 1, 70, 33, 2, 1, 128);
  nolse.lse = false;
  CHECK(check_on_device(cuda_backend(), nolse) == sm90_f32);
  for (auto [T, S] :
       {std::pair{130, 130}, std::pair{40, 150}, std::pair{150, 40}, std::pair{600, 600}})
    for (Alignment al : {Alignment::top_left, Alignment::bottom_right}) {
      Spec c = wide_spec(f, 1, T, S, 2, 1, 128);
      c.opt.causal = true;
      c.opt.alignment = al;
      INFO("T=", T, " S=", S);
      CHECK(check_on_device(cuda_backend(), c) == sm90_f32);
    }
  Spec w = wide_spec(f, 1, 200, 230, 2, 1, 128);
  w.opt.window_left = 50;
  w.opt.window_right = 7;
  w.opt.alignment = Alignment::bottom_right;
  CHECK(check_on_device(cuda_backend(), w) == sm90_f32);
  Spec band = wide_spec(f, 1, 150, 150, 2, 2, 128); // rows whose window misses every key
  band.opt.window_left = 3;
  band.opt.window_right = -1;
  band.q_lens = {150};
  band.k_lens = {20};
  CHECK(check_on_device(cuda_backend(), band) == sm90_f32);
}

TEST_CASE("cuda/sm90 f32: softcap, an explicit scale, outliers, padded varlen") {
  KATTN_REQUIRE_SM90_F32();
  Spec s = wide_spec(DType::f32, 2, 70, 90, 4, 2, 128);
  s.opt.softcap = 5.0;
  s.opt.causal = true;
  CHECK(check_on_device(cuda_backend(), s) == sm90_f32);
  Spec sc = wide_spec(DType::f32, 1, 80, 80, 2, 1, 128);
  sc.opt.scale = 0.3;
  sc.outliers = true;
  INFO("3xTF32 bound ", split_bound(sc));
  CHECK(check_on_device(cuda_backend(), sc, split_bound(sc)) == sm90_f32);
  Spec pad = wide_spec(DType::f32, 3, 100, 140, 2, 1, 128);
  pad.q_lens = {100, 37, 0};
  pad.k_lens = {140, 0, 65};
  CHECK(check_on_device(cuda_backend(), pad) == sm90_f32);
}

TEST_CASE("cuda/sm90 f32: what it leaves to sm80's kernel, by name") {
  KATTN_REQUIRE_SM90_F32();
  Spec pk = wide_spec(DType::f32, 0, 0, 0, 2, 2, 128);
  pk.packed = true;
  pk.q_lens = {5, 0, 130, 64};
  pk.k_lens = {80, 3, 129, 0};
  CHECK(refusal(pk).find("packed varlen: the sm90 fp32 kernel") != std::string::npos);
  CHECK(refusal(wide_spec(DType::f32, 1, 16, 24, 2, 1, 64)).find("built for 128") !=
        std::string::npos);
  Spec tf = wide_spec(DType::f32, 1, 16, 24, 2, 1, 128);
  tf.opt.allow_tf32 = true;
  CHECK(refusal(tf).find("options.allow_tf32") != std::string::npos);
}

TEST_CASE("cuda/sm90 f32: auto takes it from T, S >= 2048 (the measured crossover), else sm80") {
  if (!on_sm90()) {
    MESSAGE("not a compute capability 9.0 GPU: the sm90 fp32 kernel is not run");
    return;
  }
  CHECK(check_on_device(cuda_backend(), wide_spec(DType::f32, 1, 2048, 2048, 2, 1, 128)) ==
        sm90_f32);
  CHECK(check_on_device(cuda_backend(), wide_spec(DType::f32, 1, 1024, 4096, 2, 1, 128)) ==
        kernel(DType::f32, 128));
}

// Regression (H100, run s35a): with O summed over all keys in one accumulator, whose fp32 sums
// the tensor cores truncate, both 3xTF32 kernels exceeded the fp32 rule from S ~ 1000 (1.6x at
// T = S = 2048 on sm90, at T 1024 S 4096 on sm80; the test above). Each now adds its key tiles'
// sums into O with round-to-nearest (wide_math.cuh, f32_config.cuh kFlushBlocks).
TEST_CASE("cuda/wide: 3xTF32 over long key ranges within the fp32 rule") {
  for (std::int64_t H : {64, 128}) {
    INFO("H=", H);
    CHECK(check_on_device(cuda_backend(), wide_spec(DType::f32, 1, 256, 8192, 2, 1, H)) ==
          kernel(DType::f32, H));
  }
  KATTN_REQUIRE_SM90_F32();
  CHECK(check_on_device(cuda_backend(), wide_spec(DType::f32, 1, 256, 8192, 2, 1, 128)) ==
        sm90_f32);
  Spec c = wide_spec(DType::f32, 1, 512, 6000, 2, 1, 128);
  c.opt.causal = true;
  c.opt.alignment = Alignment::bottom_right;
  CHECK(check_on_device(cuda_backend(), c) == sm90_f32);
}

TEST_CASE("cuda/wide: refusals name what is missing") {
  for (DType t : wide_types)
    CHECK(refusal(wide_spec(t, 1, 16, 24, 2, 1, 256)).find("f32 and f64: {64, 128}") !=
          std::string::npos);
  EnvGuard sm90("KOKKOSATTN_CUDA_KERNEL", "sm90");
  const std::string why = refusal(wide_spec(DType::f64, 1, 16, 24, 2, 1, 64));
  INFO(why);
  CHECK((why.find("expected bf16, f16 or f32 (sm90 kernels), got f64") != std::string::npos ||
         why.find("compute capability") != std::string::npos));
}

TEST_CASE("cuda/wide: the f64 backward is refused by name (portable serves it)") {
  Attn a(wide_spec(DType::f64, 1, 16, 24, 2, 1, 64));
  DeviceCopy q(a.q.view), k(a.k.view), v(a.v.view), out(a.out.view), lse(a.lse.view()),
      dout(a.dout.view), dq(a.dq.view), dk(a.dk.view), dv(a.dv.view);
  BackwardProblem b = a.backward_problem(false);
  b.forward.q = q.view(), b.forward.k = k.view(), b.forward.v = v.view();
  b.forward.out = out.view();
  b.forward.extras.lse = lse.view();
  b.dout = dout.view(), b.dq = dq.view(), b.dk = dk.view(), b.dv = dv.view();
  ExecContext x;
  x.device = Device::cuda;
  const Support s = cuda_backend().supports(b, validate(b), x);
  INFO(s.reason);
  CHECK_FALSE(s.ok);
  CHECK(s.reason.find("backward), got f64") != std::string::npos);
}
