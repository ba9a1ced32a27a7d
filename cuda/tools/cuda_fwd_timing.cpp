// Times our CUDA flash forward (the framework-free entry, no dispatch overhead) on the FA sweep
// shapes: 16k tokens (B = 16384 / T), hidden 2048 (N = 2048 / H), bf16. CUDA events around
// each launch, with an untimed launch ahead of it so that the GPU is busy while the host
// prepares the timed one (tensor maps, tile choice): ms is the kernel alone. host_us is that
// host-side cost per call (std::chrono around the timed call, which returns once launched).
// Median of the repeats after warm-up. TFLOP/s = 4 * B * N * T * S * H, halved for causal.
// KOKKOSATTN_CUDA_KERNEL=sm80|sm90 picks the family as in the library.
//
// usage: kokkosattn_cuda_timing [--repeats R] [--T 1024,4096,8192] [--H 64,128] [--f16]
//        [--seq-major]   (q, k, v token-contiguous: the sm90 _seq kernels, head dims 64/128)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "fa_sweep.hpp"
#include "kattn_cuda/flash_fwd.hpp"

namespace {

using kattn::ElemType;
using kattn::FlashFwdParams;
using kattn::cuda_kernels::check_cuda;

// bf16 / f16 bits of N(0,1)-ish values (sum of uniforms), from a fixed LCG: fast for 100 MB.
std::vector<std::uint16_t> random_bits(std::size_t n, bool f16, std::uint64_t seed) {
  std::vector<std::uint16_t> out(n);
  std::uint64_t x = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (std::size_t i = 0; i < n; ++i) {
    float v = 0.f;
    for (int k = 0; k < 4; ++k) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      v += static_cast<float>(x >> 40) / static_cast<float>(1ull << 24) - 0.5f;
    }
    v *= 1.7f;
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, 4);
    if (f16) { // values are |v| < 4: normal halves; truncate the mantissa
      const std::uint32_t sign = (bits >> 16) & 0x8000u;
      const int e = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
      out[i] = e <= 0 ? static_cast<std::uint16_t>(sign)
                      : static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(e) << 10) |
                                                   ((bits >> 13) & 0x3ffu));
    } else {
      out[i] = static_cast<std::uint16_t>(bits >> 16);
    }
  }
  return out;
}

} // namespace

int main(int argc, char** argv) {
  kattn::cuda_tools::SweepFlags flags{20, {1024, 4096, 8192}, {64, 128}};
  bool f16 = false;
  bool seq_major = false; // q, k, v token-contiguous (fa_sweep.hpp make_seq_major)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (kattn::cuda_tools::parse_sweep_flag(i, argc, argv, flags) && flags.Ss.empty() &&
        flags.B == 0)
      continue;
    if (a == "--f16")
      f16 = true;
    else if (a == "--seq-major")
      seq_major = true;
    else {
      std::fprintf(stderr, "usage: %s [--repeats R] [--T list] [--H list] [--f16] [--seq-major]\n",
                   argv[0]);
      return 2;
    }
  }
  const int repeats = flags.repeats;
  const std::vector<int>& Ts = flags.Ts;
  const std::vector<int>& Hs = flags.Hs;
  try {
    int dev_count = 0;
    if (cudaGetDeviceCount(&dev_count) != cudaSuccess || dev_count == 0) {
      std::printf("SKIPPED: no CUDA GPU\n");
      return 77;
    }
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    std::printf("# %s (sm_%d%d); %s%s; median of %d after 3 warm-ups; TFLOP/s = 4*B*N*T*S*H "
                "(causal halved)\n",
                prop.name, prop.major, prop.minor, f16 ? "f16" : "bf16",
                seq_major ? ", sequence-major q/k/v" : "", repeats);
    std::printf("%-24s %6s %6s %4s %4s %4s %6s %10s %9s %8s\n", "kernel", "B", "T", "N", "H",
                "caus", "", "ms", "TFLOP/s", "host_us");
    const std::size_t tokens = 16384, hidden = 2048;
    const std::size_t elems = tokens * hidden;
    void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
    float* lse = nullptr;
    for (void** p : {&q, &k, &v, &o})
      check_cuda(cudaMalloc(p, elems * 2), "cudaMalloc");
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&lse), tokens * 64 * sizeof(float)),
               "cudaMalloc");
    std::uint64_t seed = 1;
    for (void* p : {q, k, v}) {
      const auto h = random_bits(elems, f16, seed++);
      check_cuda(cudaMemcpy(p, h.data(), elems * 2, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    cudaEvent_t e0, e1;
    check_cuda(cudaEventCreate(&e0), "cudaEventCreate");
    check_cuda(cudaEventCreate(&e1), "cudaEventCreate");
    for (int H : Hs)
      for (int T : Ts)
        for (bool causal : {false, true}) {
          FlashFwdParams p = kattn::cuda_tools::fa_sweep_params(
              f16 ? ElemType::f16 : ElemType::bf16, T, H, causal, q, k, v, o, lse);
          if (seq_major)
            kattn::cuda_tools::make_seq_major(p);
          const auto choice = kattn::cuda_kernels::choose_kernel(p);
          if (choice.family == kattn::cuda_kernels::KernelFamily::none) {
            std::printf("T=%d H=%d causal=%d: no kernel: %s\n", T, H, causal,
                        choice.reason.c_str());
            continue;
          }
          std::vector<float> ms;
          std::vector<double> host_us;
          for (int r = 0; r < repeats + 3; ++r) {
            kattn::cuda_kernels::flash_fwd(p, nullptr); // keeps the GPU busy: not timed
            check_cuda(cudaEventRecord(e0), "cudaEventRecord");
            const auto h0 = std::chrono::steady_clock::now();
            kattn::cuda_kernels::flash_fwd(p, nullptr);
            const auto h1 = std::chrono::steady_clock::now();
            check_cuda(cudaEventRecord(e1), "cudaEventRecord");
            check_cuda(cudaEventSynchronize(e1), "cudaEventSynchronize");
            float t = 0;
            check_cuda(cudaEventElapsedTime(&t, e0, e1), "cudaEventElapsedTime");
            if (r >= 3) {
              ms.push_back(t);
              host_us.push_back(std::chrono::duration<double, std::micro>(h1 - h0).count());
            }
          }
          std::sort(ms.begin(), ms.end());
          std::sort(host_us.begin(), host_us.end());
          const double med = ms[ms.size() / 2];
          const double flops =
              4.0 * p.B * p.N * static_cast<double>(T) * T * H * (causal ? 0.5 : 1.0);
          std::printf("%-24s %6d %6d %4d %4d %4d %6s %10.4f %9.1f %8.1f\n", choice.name.c_str(),
                      p.B, T, p.N, H, causal ? 1 : 0, "", med, flops / (med * 1e-3) / 1e12,
                      host_us[host_us.size() / 2]);
        }
    for (void* p : {q, k, v, o})
      check_cuda(cudaFree(p), "cudaFree");
    check_cuda(cudaFree(lse), "cudaFree");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
