// A/B timing of sm90 forward tile configurations on the FA sweep shapes (16k tokens, hidden
// 2048, bf16): the configurations the library ships (through their launchers) beside candidate
// configurations compiled here. Interleaved at the finest grain (each repetition runs every
// configuration once, so clock throttling hits them alike); median per configuration. Each
// configuration's output, NaN-poisoned first, is compared with the first one's (max |diff|;
// different key blocks sum in a different order, so bf16 outputs may differ by an ulp).
// TFLOP/s = 4 * B * N * T * S * H, halved for causal; '*' marks the configuration the library
// picks (tile_choice.hpp).
//
// usage: kokkosattn_sm90_config_ab [--repeats R] [--T 512,1024] [--H 64,128]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "fa_sweep.hpp"
#include "sm90/inst/instances.hpp"
#include "sm90/launch.cuh"
#include "sm90/tile_choice.hpp"

namespace {

using namespace kattn::cuda_kernels;
using namespace kattn::cuda_kernels::sm90;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Candidates: configurations the library does not instantiate (an instantiation here of a
// shipped configuration would register the same kernel from two translation units).
template <class Cfg>
void candidate(const FlashFwdParams& p, cudaStream_t s) {
  launch_fwd<Cfg>(p, s);
}

struct Config {
  const char* name;
  int head_dim;
  void (*launch)(const FlashFwdParams&, cudaStream_t);
  bool shipped;
  TileChoice choice; // for shipped configurations
};

// Earlier rounds' candidates (docs/cuda-sm90.md, "Tile configurations") are in the results
// files. Suffixes: _old = without turns carried across tiles (kCarryTurn), _ct = with them but
// without the late output rescale head dim 64's 192-row tiles ship with (kLateRescale);
// h128_n160/n176: key blocks that waste less of the last block at 4096 keys than 192 (which
// leaves 64 of 192 keys in it); h128_n160_pair_q2: the largest key block that leaves room for
// a second Q buffer (2 x 32 + 2 x 80 KB), so the next tile's Q loads under this one.
const Config kConfigs[] = {
    {"h128_paired_q2", 128, &launch_bf16_h128_short, true, TileChoice::h128_short},
    {"h128_n192_paired", 128, &launch_bf16_h128_long, true, TileChoice::h128_long},
    {"h128_paired_q2_old", 128, &candidate<FwdConfig<true, 128, 0, 0, 0, -1, 2, 1, -1, 0>>, false,
     TileChoice::h128_short},
    {"h128_n192_pair_old", 128, &candidate<FwdConfig<true, 128, 0, 192, 2, -1, 1, 1, -1, 0>>, false,
     TileChoice::h128_long},
    {"h128_n160_pair_ct", 128, &candidate<FwdConfig<true, 128, 0, 160, 2, -1, 1, 1, -1, 1>>, false,
     TileChoice::h128_long},
    {"h128_n176_pair_ct", 128, &candidate<FwdConfig<true, 128, 0, 176, 2, -1, 1, 1, -1, 1>>, false,
     TileChoice::h128_long},
    {"h128_n160_pair_q2", 128, &candidate<FwdConfig<true, 128, 0, 160, 2, -1, 2, 1, -1, 1>>, false,
     TileChoice::h128_long},
    {"h64_m192", 64, &launch_bf16_h64, true, TileChoice::h64},
    {"h64_m192_ct", 64, &candidate<FwdConfig<true, 64, 0, 0, 0, -1, 1, -1, 1, 1>>, false,
     TileChoice::h64},
    {"h64_m192_old", 64, &candidate<FwdConfig<true, 64, 0, 0, 0, -1, 1, -1, 1, 0>>, false,
     TileChoice::h64},
    {"h64_m128_paired", 64, &launch_bf16_h64_short_causal, true, TileChoice::h64_short_causal},
    {"h64_m128_pair_old", 64, &candidate<FwdConfig<true, 64, 2, 0, 3, -1, 1, 1, -1, 0>>, false,
     TileChoice::h64_short_causal},
    {"h256_n80_paired", 256, &launch_bf16_h256, true, TileChoice::h256},
};

// N(0,1)-ish bf16 values (sum of four uniforms from a per-element xorshift).
__global__ void fill(std::uint16_t* p, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed * 97531u;
    float v = 0.f;
    for (int k = 0; k < 4; ++k) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      v += static_cast<float>(x >> 8) * (1.f / 16777216.f) - 0.5f;
    }
    v *= 1.7f;
    unsigned b = 0;
    memcpy(&b, &v, 4);
    p[i] = static_cast<std::uint16_t>(b >> 16);
  }
}

// max |a - b| over bf16 arrays into *out (as float bits; NaN propagates as the largest).
__global__ void max_abs_diff(const std::uint16_t* a, const std::uint16_t* b, std::size_t n,
                             unsigned* out) {
  float m = 0.f;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const unsigned ua = static_cast<unsigned>(a[i]) << 16, ub = static_cast<unsigned>(b[i]) << 16;
    float fa = 0.f, fb = 0.f;
    memcpy(&fa, &ua, 4);
    memcpy(&fb, &ub, 4);
    const float d = fabsf(fa - fb);
    if (!(d <= m))
      m = d != d ? __int_as_float(0x7f800000) : d;
  }
  unsigned u = 0;
  memcpy(&u, &m, 4);
  atomicMax(out, u);
}

} // namespace

int main(int argc, char** argv) {
  kattn::cuda_tools::SweepFlags flags{25, {512, 1024, 2048, 4096, 8192, 16384}, {128, 64}};
  for (int i = 1; i < argc; ++i) {
    if (!kattn::cuda_tools::parse_sweep_flag(i, argc, argv, flags)) {
      std::fprintf(stderr, "usage: %s [--repeats R] [--T list] [--H list]\n", argv[0]);
      return 2;
    }
  }
  const int repeats = flags.repeats;
  const std::vector<int>& Ts = flags.Ts;
  const std::vector<int>& Hs = flags.Hs;
  try {
    int major = 0, count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      std::printf("SKIPPED: no CUDA GPU\n");
      return 77;
    }
    check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "attribute");
    if (major != 9) {
      std::printf("SKIPPED: not a compute capability 9.0 GPU\n");
      return 77;
    }
    const std::size_t tokens = 16384, hidden = 2048, elems = tokens * hidden;
    std::uint16_t *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *o0 = nullptr;
    float* lse = nullptr;
    unsigned* dmax = nullptr;
    for (std::uint16_t** p : {&q, &k, &v, &o, &o0})
      check(cudaMalloc(p, elems * 2), "cudaMalloc");
    check(cudaMalloc(&lse, tokens * 64 * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&dmax, sizeof(unsigned)), "cudaMalloc");
    fill<<<1024, 256>>>(q, elems, 1);
    fill<<<1024, 256>>>(k, elems, 2);
    fill<<<1024, 256>>>(v, elems, 3);
    check(cudaGetLastError(), "fill");
    check(cudaDeviceSynchronize(), "fill");
    cudaEvent_t e0, e1;
    check(cudaEventCreate(&e0), "cudaEventCreate");
    check(cudaEventCreate(&e1), "cudaEventCreate");
    std::printf("# bf16, 16k tokens, hidden 2048; median of %d interleaved repetitions; "
                "* = the library's choice\n",
                repeats);
    std::printf("%-20s %6s %4s %5s %4s %9s %9s %10s\n", "config", "T", "H", "caus", "B", "ms",
                "TFLOP/s", "maxdiff");
    for (int H : Hs)
      for (int T : Ts)
        for (int causal : {0, 1}) {
          FlashFwdParams p =
              kattn::cuda_tools::fa_sweep_params(ElemType::bf16, T, H, causal, q, k, v, o, lse);
          std::vector<const Config*> cs;
          for (const Config& c : kConfigs)
            if (c.head_dim == H)
              cs.push_back(&c);
          if (cs.empty())
            continue;
          std::vector<float> diff(cs.size(), 0.f);
          for (std::size_t j = 0; j < cs.size(); ++j) {
            p.out = j == 0 ? o0 : o;
            check(cudaMemset(p.out, 0xff, elems * 2), "cudaMemset");
            cs[j]->launch(p, nullptr);
            check(cudaDeviceSynchronize(), cs[j]->name);
            if (j > 0) {
              check(cudaMemset(dmax, 0, sizeof(unsigned)), "cudaMemset");
              max_abs_diff<<<1024, 256>>>(o0, o, elems, dmax);
              unsigned bits = 0;
              check(cudaMemcpy(&bits, dmax, sizeof bits, cudaMemcpyDeviceToHost), "cudaMemcpy");
              std::memcpy(&diff[j], &bits, 4);
            }
          }
          p.out = o;
          std::vector<std::vector<float>> ms(cs.size());
          for (int r = 0; r < repeats + 2; ++r)
            for (std::size_t j = 0; j < cs.size(); ++j) {
              check(cudaEventRecord(e0), "cudaEventRecord");
              cs[j]->launch(p, nullptr);
              check(cudaEventRecord(e1), "cudaEventRecord");
              check(cudaEventSynchronize(e1), "cudaEventSynchronize");
              float t = 0.f;
              check(cudaEventElapsedTime(&t, e0, e1), "cudaEventElapsedTime");
              if (r >= 2) // two warm-up repetitions
                ms[j].push_back(t);
            }
          const double flops = 4.0 * p.B * p.N * static_cast<double>(T) * T * H / (causal ? 2 : 1);
          const TileChoice picked = choose_tile(p);
          for (std::size_t j = 0; j < cs.size(); ++j) {
            std::sort(ms[j].begin(), ms[j].end());
            const double med = ms[j][ms[j].size() / 2];
            const bool star = cs[j]->shipped && cs[j]->choice == picked;
            std::printf("%-19s%c %6d %4d %5d %4d %9.3f %9.1f %10.3g\n", cs[j]->name,
                        star ? '*' : ' ', T, H, causal, p.B, med, flops / med * 1e-9,
                        static_cast<double>(diff[j]));
          }
          std::fflush(stdout);
        }
    for (void* p : {static_cast<void*>(q), static_cast<void*>(k), static_cast<void*>(v),
                    static_cast<void*>(o), static_cast<void*>(o0), static_cast<void*>(lse),
                    static_cast<void*>(dmax)})
      check(cudaFree(p), "cudaFree");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
