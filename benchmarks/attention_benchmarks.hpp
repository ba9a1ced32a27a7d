#pragma once

namespace kattn_bench {

// forward/{naive,portable}/T:<T>/causal:<0|1> for T = 256 ... 4096, and
// backward/portable/T:<T>/causal:<0|1> for T = 1024, 2048.
void register_attention_benchmarks();

// Frees the cached inputs (Kokkos Views): call before Kokkos is finalised.
void release_attention_inputs();

} // namespace kattn_bench
