// kokkosattn_bench_cpu: issue 3's CPU measurement as Google Benchmark programs (forward timings
// of naive and portable, the fp32 FMA peak, peak RSS at T = 4096). `make bench` runs it with
// --benchmark_out=<json>; benchmarks/compare.py turns that into report/bench.json rows.
#include <benchmark/benchmark.h>

#include <string>

#include "attention_benchmarks.hpp"
#include "bench_shapes.hpp"
#include "fma_peak.hpp"
#include "peak_rss.hpp"

int main(int argc, char* argv[]) {
  if (kattn_bench::is_rss_child(argc, argv))
    return kattn_bench::rss_child_main(argc, argv);

  Kokkos::ScopeGuard guard(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  const kattn_bench::Exec exec;
  benchmark::AddCustomContext("compiler", KOKKOSATTN_BENCH_COMPILER);
  benchmark::AddCustomContext("kokkos_version", KOKKOSATTN_BENCH_KOKKOS_VERSION);
  benchmark::AddCustomContext("build", KOKKOSATTN_BENCH_BUILD);
  benchmark::AddCustomContext("kokkos_exec_space", kattn_bench::Exec::name());
  benchmark::AddCustomContext("threads", std::to_string(exec.concurrency()));

  kattn_bench::register_fma_peak_benchmark();
  kattn_bench::register_attention_benchmarks();
  kattn_bench::register_peak_rss_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  kattn_bench::release_attention_inputs();
  return 0;
}
