// This machine's fp32 FMA peak, so that attention results can be read as a fraction of it:
// every OpenMP thread runs independent register-resident FMA chains, as wide as the compiler's
// target (-march=native) allows. Enough chains hide the FMA latency on two FMA ports.
#include "fma_peak.hpp"

#include <benchmark/benchmark.h>
#include <omp.h>

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

#include <cmath>

namespace kattn_bench {

namespace {

#if defined(__AVX512F__)
using Vec = __m512;
constexpr int lanes = 16;
inline Vec splat(float x) {
  return _mm512_set1_ps(x);
}
inline Vec fma(Vec a, Vec b, Vec c) {
  return _mm512_fmadd_ps(a, b, c);
}
inline float first(Vec a) {
  return _mm512_cvtss_f32(a);
}
constexpr const char* isa = "avx512f";
#elif defined(__FMA__)
using Vec = __m256;
constexpr int lanes = 8;
inline Vec splat(float x) {
  return _mm256_set1_ps(x);
}
inline Vec fma(Vec a, Vec b, Vec c) {
  return _mm256_fmadd_ps(a, b, c);
}
inline float first(Vec a) {
  return _mm256_cvtss_f32(a);
}
constexpr const char* isa = "avx2+fma";
#else
using Vec = float;
constexpr int lanes = 1;
inline Vec splat(float x) {
  return x;
}
inline Vec fma(Vec a, Vec b, Vec c) {
  return std::fma(a, b, c);
}
inline float first(Vec a) {
  return a;
}
constexpr const char* isa = "scalar";
#endif

constexpr int chains = 10;        // >= latency (4) x FMA ports (2), fits 16 registers
constexpr long steps = 8'000'000; // per thread and benchmark iteration (~30 ms)
constexpr double flops_per_thread = 2.0 * lanes * chains * double(steps);

float fma_chains(float seed) {
  Vec acc[chains];
  for (int c = 0; c < chains; ++c)
    acc[c] = splat(seed + float(c));
  const Vec a = splat(0.9999999f), b = splat(1e-7f);
  for (long s = 0; s < steps; ++s)
  // Unrolled, so that acc[] lives in registers (a rolled loop keeps it in memory). nvcc, which
  // compiles every .cpp under a CUDA Kokkos' nvcc_wrapper, warns about the GCC pragma: there the
  // loop is left to the compiler (this is a CPU benchmark).
#if !defined(__CUDACC__)
#pragma GCC unroll 16
#endif
    for (int c = 0; c < chains; ++c)
      acc[c] = fma(acc[c], a, b);
  float sum = 0;
  for (int c = 0; c < chains; ++c)
    sum += first(acc[c]);
  return sum;
}

void fma_peak(benchmark::State& state) {
  const int threads = omp_get_max_threads();
  for (auto _ : state) {
    float total = 0;
#pragma omp parallel reduction(+ : total)
    total += fma_chains(float(omp_get_thread_num()));
    benchmark::DoNotOptimize(total);
  }
  state.counters["FLOPS"] =
      benchmark::Counter(flops_per_thread * threads, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = threads;
  state.counters["lanes"] = lanes;
  state.SetLabel(isa);
}

} // namespace

void register_fma_peak_benchmark() {
  benchmark::RegisterBenchmark("fma_peak/fp32", fma_peak)
      ->UseRealTime()
      ->MinWarmUpTime(0.1)
      ->MinTime(1.0)
      ->Unit(benchmark::kMillisecond);
}

} // namespace kattn_bench
