// Forward-pass timings of the CPU backends over the issue 3 sweep, and the portable backward.
#include "attention_benchmarks.hpp"

#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>

#include "bench_shapes.hpp"

namespace kattn_bench {

namespace {

void fill_normal(const View4& v, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  float* p = v.data();
  for (std::size_t i = 0; i < v.size(); ++i)
    p[i] = dist(rng);
}

// One problem size alive at a time: the T = 4096 inputs alone are 128 MiB.
std::unique_ptr<Inputs> cached;

const Inputs& inputs_for(int T) {
  if (!cached || int(cached->q.extent(1)) != T) {
    cached.reset();
    cached = std::make_unique<Inputs>(T);
  }
  return *cached;
}

void forward_benchmark(benchmark::State& state, kattn::Backend backend) {
  const int T = int(state.range(0));
  const bool causal = state.range(1) != 0;
  const Inputs& in = inputs_for(T);
  for (auto _ : state)
    run_forward(in, backend, causal);
  state.counters["FLOPS"] = benchmark::Counter(forward_flops(T, T, causal),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["io_bytes"] = in.io_bytes();
  state.SetBytesProcessed(static_cast<std::int64_t>(in.io_bytes() * double(state.iterations())));
}

// What the backward takes beside the forward's inputs: dout, the gradients and the forward's
// LSE (the forward runs once, untimed, to fill out and lse).
struct BackwardInputs {
  View4 dout, dq, dk, dv;
  Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace> lse;
  explicit BackwardInputs(const Inputs& in, bool causal)
      : dout("dout", B, in.q.extent(1), N, H), dq("dq", B, in.q.extent(1), N, H),
        dk("dk", B, in.k.extent(1), N, H), dv("dv", B, in.v.extent(1), N, H),
        lse("lse", B, N, in.q.extent(1)) {
    fill_normal(dout, 4);
    run(in, causal, true);
  }
  void run(const Inputs& in, bool causal, bool forward) const {
    kattn::Options o;
    o.backend = kattn::Backend::portable;
    o.causal = causal;
    KokkosAttn::Extras e;
    e.lse = lse;
    const Exec exec;
    if (forward)
      KokkosAttn::sdpa(exec, in.q, in.k, in.v, in.out, o, e);
    else
      KokkosAttn::sdpa_backward(exec, in.q, in.k, in.v, in.out, dout, dq, dk, dv, o, e);
    exec.fence();
  }
};

void backward_benchmark(benchmark::State& state) {
  const int T = int(state.range(0));
  const bool causal = state.range(1) != 0;
  const Inputs& in = inputs_for(T);
  const BackwardInputs bw(in, causal);
  for (auto _ : state)
    bw.run(in, causal, false);
  // FLOPs as the results schema counts them: 2.5 x the forward's for the backward alone.
  state.counters["FLOPS"] = benchmark::Counter(2.5 * forward_flops(T, T, causal),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

} // namespace

Inputs::Inputs(int T)
    : q("q", B, T, N, H), k("k", B, T, N, H), v("v", B, T, N, H), out("out", B, T, N, H) {
  fill_normal(q, 1);
  fill_normal(k, 2);
  fill_normal(v, 3);
}

double Inputs::io_bytes() const {
  return double(q.size() + k.size() + v.size() + out.size()) * sizeof(float);
}

void run_forward(const Inputs& in, kattn::Backend backend, bool causal) {
  kattn::Options o;
  o.backend = backend;
  o.causal = causal;
  const Exec exec;
  KokkosAttn::sdpa(exec, in.q, in.k, in.v, in.out, o);
  exec.fence();
}

void release_attention_inputs() {
  cached.reset();
}

void register_attention_benchmarks() {
  // naive materialises [B, N, T, S] fp32 scores (2 GiB at T = 4096, about a minute per call
  // here): it is timed up to T = 2048; at T = 4096 the peak-RSS child's one run times it.
  for (int T : {256, 512, 1024, 2048, 4096})
    for (int causal : {0, 1})
      for (kattn::Backend backend : {kattn::Backend::naive, kattn::Backend::portable}) {
        if (backend == kattn::Backend::naive && T > 2048)
          continue;
        benchmark::RegisterBenchmark(std::string("forward/") + std::string(to_string(backend)),
                                     forward_benchmark, backend)
            ->Args({T, causal})
            ->ArgNames({"T", "causal"})
            ->UseRealTime()
            ->MinWarmUpTime(T >= 2048 ? 0.0 : 0.1)
            ->Unit(benchmark::kMillisecond);
      }
  for (int T : {1024, 2048})
    for (int causal : {0, 1})
      benchmark::RegisterBenchmark("backward/portable", backward_benchmark)
          ->Args({T, causal})
          ->ArgNames({"T", "causal"})
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
}

} // namespace kattn_bench
