// A/B timing of sm90 forward tile configurations on the FA sweep shapes (16k tokens, hidden
// 2048, bf16): the configurations the library ships (through their launchers) beside candidate
// configurations compiled here. Interleaved at the finest grain (each repetition runs every
// configuration once, so clock throttling hits them alike); median per configuration. Each
// configuration's output, NaN-poisoned first, is compared with the first one's (max |diff|;
// different key blocks sum in a different order, so bf16 outputs may differ by an ulp).
// TFLOP/s = 4 * B * N * T * S * H, halved for causal; '*' marks the configuration the library
// picks (tile_choice.hpp).
//
// usage: kokkosattn_sm90_config_ab [--repeats R] [--T 512,1024] [--H 64,128] [--S 2048,4096]
//        [--B 2] [--mix] [--trace DIR]
//   --S/--B: key lengths at fixed T and batch (non-causal only), to separate per-tile costs;
//   --mix: interleave every shape too (one repetition runs every shape x configuration), so
//          shapes can be compared with each other (clocks drift between shapes otherwise);
//   --trace DIR: after timing, one launch per shape of each tracing configuration writes its
//          per-tile timestamps (TileTraceProbe, sm90_probes.cuh) to
//          DIR/<config>_T<T>_S<S>_B<B>_c<c>.bin as uint64
//          [grid][kTraceRounds][warpgroups][kTraceWords] (summary:
//          cuda/tools/sm90_trace_summary.py).
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

#include "common/cuda_check.hpp"
#include "fa_sweep.hpp"
#include "sm90/inst/instances.hpp"
#include "sm90/launch.cuh"
#include "sm90/tile_choice.hpp"
#include "sm90_probes.cuh"

namespace {

using kattn::ElemType;
using kattn::FlashFwdParams;
using namespace kattn::cuda_kernels;
using namespace kattn::cuda_kernels::sm90;

// Candidates: configurations the library does not instantiate (an instantiation here of a
// shipped configuration would register the same kernel from two translation units), or any
// configuration with a probe of the tool (sm90_probes.cuh).
template <class Cfg, class Probe = NoProbe>
void candidate(const FlashFwdParams& p, cudaStream_t s) {
  launch_fwd<Cfg, Probe>(p, s);
}

// Tracing twins of configurations (TileTraceProbe), launched once per shape with --trace.
struct TraceConfig {
  const char* name;
  int head_dim;
  int warpgroups;
  void (*launch)(const FlashFwdParams&, cudaStream_t, std::uint64_t*);
};
template <class Cfg>
void traced(const FlashFwdParams& p, cudaStream_t s, std::uint64_t* trace) {
  launch_fwd<Cfg, TileTraceProbe>(p, s, trace);
}
// k with one knob changed: set<&FwdKnobs::tail_n>(k, 0).
template <auto kMember, class V>
constexpr FwdKnobs set(FwdKnobs k, V value) {
  k.*kMember = value;
  return k;
}

// The shipped head dim 128 configuration with per-tile timestamps.
const TraceConfig kTraceConfigs[] = {
    {"h128_n192_tail64_trace", 128, 2, &traced<Sm90Config<true, TileChoice::h128_long_tail>>},
};

struct Config {
  const char* name;
  int head_dim;
  void (*launch)(const FlashFwdParams&, cudaStream_t);
  bool shipped;
  TileChoice choice; // for shipped configurations
};

// Earlier rounds' candidates (docs/cuda-sm90.md, "Tile configurations") are in the results
// files (round 6: 2 or 4 independent max/sum chains per softmax row, per-warpgroup Q loads, a
// deferred epilogue; rounds 7-8: TMA-store epilogue, balanced grid, stream-K tail on branches;
// round 9: lazy rescale at head dims 64/128, deferred row stores, exp2 on the FMA pipe on branch
// wip/sm90-soft-exp). Round 9's shipped knobs beside the configurations as shipped before them:
// _r8 = before round 9, _r9 = before .desc_advance; h128_n192_paired = the 192-key tile
// without the narrow last block (a configuration of its own until round 9); h256_n80_da = head
// dim 256 with .desc_advance (mixed: not shipped); _nost = a diagnostic with wrong outputs,
// round 8's narrow-tail configuration without its global stores (what the stores cost).
template <int kHeadDim, FwdKnobs kKnobs, class Probe = NoProbe>
constexpr auto cand = &candidate<FwdConfig<true, kHeadDim, kKnobs>, Probe>;
constexpr FwdKnobs kH128 = tile_policy(TileChoice::h128_long_tail);
constexpr FwdKnobs kH128R9 = set<&FwdKnobs::desc_advance>(kH128, false);
constexpr FwdKnobs kH128R8 = set<&FwdKnobs::split_last_pv>(kH128R9, false);
constexpr FwdKnobs kH64 = tile_policy(TileChoice::h64);
constexpr FwdKnobs kH256 = tile_policy(TileChoice::h256);
const Config kConfigs[] = {
    {"h128_paired_q2", 128, &launch_bf16_h128_short, true, TileChoice::h128_short},
    {"h128_n192_tail64", 128, &launch_bf16_h128_long_tail, true, TileChoice::h128_long_tail},
    {"h128_n192_paired", 128, cand<128, set<&FwdKnobs::tail_n>(kH128, 0)>, false,
     TileChoice::h128_long_tail},
    {"h128_n192_tail64_r9", 128, cand<128, kH128R9>, false, TileChoice::h128_long_tail},
    {"h128_n192_tail64_r8", 128, cand<128, kH128R8>, false, TileChoice::h128_long_tail},
    {"h128_n192_r8", 128, cand<128, set<&FwdKnobs::tail_n>(kH128R8, 0)>, false,
     TileChoice::h128_long_tail},
    {"h128_n192_tail64_nost", 128, cand<128, kH128R8, NoStoreProbe>, false,
     TileChoice::h128_long_tail},
    {"h64_m192", 64, &launch_bf16_h64, true, TileChoice::h64},
    {"h64_m192_r9", 64, cand<64, set<&FwdKnobs::desc_advance>(kH64, false)>, false,
     TileChoice::h64},
    {"h64_m128_paired", 64, &launch_bf16_h64_short_causal, true, TileChoice::h64_short_causal},
    {"h256_n80_paired", 256, &launch_bf16_h256, true, TileChoice::h256},
    {"h256_n80_r8", 256, cand<256, set<&FwdKnobs::lazy_rescale>(kH256, false)>, false,
     TileChoice::h256},
    {"h256_n80_da", 256, cand<256, set<&FwdKnobs::desc_advance>(kH256, true)>, false,
     TileChoice::h256},
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

struct Shape {
  FlashFwdParams p;
  int T, S, H, causal;
  double flops;
  std::vector<const Config*> cs;
  std::vector<float> diff;
  std::vector<std::vector<float>> ms;
};

// Runs every configuration of each shape once on NaN-poisoned outputs and records its max |diff|
// from the shape's first configuration (0 for the first).
void check_outputs(std::vector<Shape>& shapes, std::uint16_t* o0, std::uint16_t* o,
                   std::size_t elems, unsigned* dmax) {
  for (Shape& sh : shapes) {
    sh.diff.assign(sh.cs.size(), 0.f);
    sh.ms.assign(sh.cs.size(), {});
    const std::size_t out_elems = static_cast<std::size_t>(sh.p.B) * sh.T * sh.p.N * sh.H;
    FlashFwdParams p = sh.p;
    for (std::size_t j = 0; j < sh.cs.size(); ++j) {
      p.out = j == 0 ? o0 : o;
      check_cuda(cudaMemset(p.out, 0xff, elems * 2), "cudaMemset");
      sh.cs[j]->launch(p, nullptr);
      check_cuda(cudaDeviceSynchronize(), sh.cs[j]->name);
      if (j > 0) {
        check_cuda(cudaMemset(dmax, 0, sizeof(unsigned)), "cudaMemset");
        max_abs_diff<<<1024, 256>>>(o0, o, out_elems, dmax);
        unsigned bits = 0;
        check_cuda(cudaMemcpy(&bits, dmax, sizeof bits, cudaMemcpyDeviceToHost), "cudaMemcpy");
        std::memcpy(&sh.diff[j], &bits, 4);
      }
    }
  }
}

// --trace: one launch per shape of each tracing configuration of its head dim (after two
// warm-ups) writes the per-tile timestamps to DIR/<config>_T<T>_S<S>_B<B>_c<causal>.bin.
void write_traces(const std::vector<Shape>& shapes, const std::string& dir, void* out) {
  int sms = 0;
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  for (const TraceConfig& tc : kTraceConfigs) {
    const std::size_t words =
        static_cast<std::size_t>(sms) * kTraceRounds * tc.warpgroups * kTraceWords;
    std::uint64_t* d_trace = nullptr;
    check_cuda(cudaMalloc(&d_trace, words * 8), "cudaMalloc");
    std::vector<std::uint64_t> h(words);
    for (const Shape& sh : shapes) {
      if (sh.H != tc.head_dim)
        continue;
      FlashFwdParams p = sh.p;
      p.out = out;
      for (int w = 0; w < 2; ++w)
        tc.launch(p, nullptr, nullptr);
      check_cuda(cudaMemset(d_trace, 0, words * 8), "cudaMemset");
      tc.launch(p, nullptr, d_trace);
      check_cuda(cudaDeviceSynchronize(), tc.name);
      check_cuda(cudaMemcpy(h.data(), d_trace, words * 8, cudaMemcpyDeviceToHost), "cudaMemcpy");
      const std::string path = dir + "/" + tc.name + "_T" + std::to_string(sh.T) + "_S" +
                               std::to_string(sh.S) + "_B" + std::to_string(sh.p.B) + "_c" +
                               std::to_string(sh.causal) + ".bin";
      FILE* f = std::fopen(path.c_str(), "wb");
      const bool written = f != nullptr && std::fwrite(h.data(), 8, words, f) == words;
      if (f != nullptr)
        std::fclose(f);
      if (!written)
        throw std::runtime_error("cannot write " + path);
      std::printf("# trace %s: grid %d, rounds %d, warpgroups %d, words %d\n", path.c_str(), sms,
                  kTraceRounds, tc.warpgroups, kTraceWords);
    }
    check_cuda(cudaFree(d_trace), "cudaFree");
  }
}

} // namespace

int main(int argc, char** argv) {
  kattn::cuda_tools::SweepFlags flags{25, {512, 1024, 2048, 4096, 8192, 16384}, {128, 64}};
  bool mix = false;
  std::string trace_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (kattn::cuda_tools::parse_sweep_flag(i, argc, argv, flags)) {
      continue;
    }
    if (a == "--mix") {
      mix = true;
    } else if (a == "--trace" && i + 1 < argc) {
      trace_dir = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--repeats R] [--T list] [--H list] [--S list] [--B n] [--mix] "
                   "[--trace DIR]\n",
                   argv[0]);
      return 2;
    }
  }
  const int repeats = flags.repeats;
  try {
    int major = 0, count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      std::printf("SKIPPED: no CUDA GPU\n");
      return 77;
    }
    check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "attribute");
    if (major != 9) {
      std::printf("SKIPPED: not a compute capability 9.0 GPU\n");
      return 77;
    }
    const std::size_t tokens = kattn::cuda_tools::kSweepTokens;
    const std::size_t elems = tokens * kattn::cuda_tools::kSweepHidden;
    std::uint16_t *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *o0 = nullptr;
    float* lse = nullptr;
    unsigned* dmax = nullptr;
    for (std::uint16_t** p : {&q, &k, &v, &o, &o0})
      check_cuda(cudaMalloc(p, elems * 2), "cudaMalloc");
    check_cuda(cudaMalloc(&lse, tokens * 64 * sizeof(float)), "cudaMalloc");
    check_cuda(cudaMalloc(&dmax, sizeof(unsigned)), "cudaMalloc");
    fill<<<1024, 256>>>(q, elems, 1);
    fill<<<1024, 256>>>(k, elems, 2);
    fill<<<1024, 256>>>(v, elems, 3);
    check_cuda(cudaGetLastError(), "fill");
    check_cuda(cudaDeviceSynchronize(), "fill");
    cudaEvent_t e0, e1;
    check_cuda(cudaEventCreate(&e0), "cudaEventCreate");
    check_cuda(cudaEventCreate(&e1), "cudaEventCreate");

    // Shapes, and each one's configurations checked against its first.
    std::vector<Shape> shapes;
    const std::vector<int> Ss = flags.Ss.empty() ? std::vector<int>{0} : flags.Ss;
    for (int H : flags.Hs)
      for (int T : flags.Ts)
        for (int S0 : Ss)
          for (int causal : {0, 1}) {
            const int S = S0 > 0 ? S0 : T;
            if (causal && S != T) { // the FLOP count below assumes T = S for causal
              continue;
            }
            if (!kattn::cuda_tools::sweep_shape_fits(T, S, flags.B)) {
              std::printf("# T %d S %d B %d: over the 16k-token buffers, skipped\n", T, S, flags.B);
              continue;
            }
            Shape sh;
            sh.p = kattn::cuda_tools::fa_sweep_params(ElemType::bf16, T, H, causal, q, k, v, o, lse,
                                                      S, flags.B);
            sh.T = T, sh.S = S, sh.H = H, sh.causal = causal;
            sh.flops = 4.0 * sh.p.B * sh.p.N * static_cast<double>(T) * S * H / (causal ? 2 : 1);
            for (const Config& c : kConfigs)
              if (c.head_dim == H)
                sh.cs.push_back(&c);
            if (!sh.cs.empty())
              shapes.push_back(sh);
          }
    check_outputs(shapes, o0, o, elems, dmax);

    // Timing groups: every shape alone, or (--mix) all shapes together.
    std::vector<std::vector<Shape*>> groups;
    for (Shape& sh : shapes) {
      if (!mix || groups.empty())
        groups.emplace_back();
      groups.back().push_back(&sh);
    }
    std::printf("# bf16, 16k tokens, hidden 2048; median of %d interleaved repetitions%s; "
                "* = the library's choice\n",
                repeats, mix ? " (shapes interleaved too)" : "");
    std::printf("%-22s %6s %6s %4s %5s %4s %9s %9s %10s\n", "config", "T", "S", "H", "caus", "B",
                "ms", "TFLOP/s", "maxdiff");
    for (const std::vector<Shape*>& g : groups) {
      for (int r = 0; r < repeats + 2; ++r)
        for (Shape* sh : g)
          for (std::size_t j = 0; j < sh->cs.size(); ++j) {
            FlashFwdParams p = sh->p;
            p.out = o;
            check_cuda(cudaEventRecord(e0), "cudaEventRecord");
            sh->cs[j]->launch(p, nullptr);
            check_cuda(cudaEventRecord(e1), "cudaEventRecord");
            check_cuda(cudaEventSynchronize(e1), "cudaEventSynchronize");
            float t = 0.f;
            check_cuda(cudaEventElapsedTime(&t, e0, e1), "cudaEventElapsedTime");
            if (r >= 2) // two warm-up repetitions
              sh->ms[j].push_back(t);
          }
      for (Shape* sh : g) {
        const TileChoice picked = choose_tile(sh->p);
        for (std::size_t j = 0; j < sh->cs.size(); ++j) {
          std::sort(sh->ms[j].begin(), sh->ms[j].end());
          const double med = sh->ms[j][sh->ms[j].size() / 2];
          const bool star = sh->cs[j]->shipped && sh->cs[j]->choice == picked;
          std::printf("%-21s%c %6d %6d %4d %5d %4d %9.3f %9.1f %10.3g\n", sh->cs[j]->name,
                      star ? '*' : ' ', sh->T, sh->S, sh->H, sh->causal, sh->p.B, med,
                      sh->flops / med * 1e-9, static_cast<double>(sh->diff[j]));
        }
      }
      std::fflush(stdout);
    }

    if (!trace_dir.empty()) {
      write_traces(shapes, trace_dir, o);
    }
    for (void* p : {static_cast<void*>(q), static_cast<void*>(k), static_cast<void*>(v),
                    static_cast<void*>(o), static_cast<void*>(o0), static_cast<void*>(lse),
                    static_cast<void*>(dmax)})
      check_cuda(cudaFree(p), "cudaFree");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
