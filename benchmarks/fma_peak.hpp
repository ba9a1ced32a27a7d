#pragma once

namespace kattn_bench {

// fma_peak/fp32: the fp32 FMA throughput of all OpenMP threads (counter FLOPS).
void register_fma_peak_benchmark();

} // namespace kattn_bench
