#pragma once

#include <string_view>

namespace kattn_bench {

// peak_rss/{inputs,naive,portable}/T:4096/causal:0: the peak resident set (VmHWM) of a fresh child
// process (this program, re-executed) that allocates the inputs and runs one forward pass;
// `inputs` runs none, so peak minus its peak is the backend's extra memory. The child also
// reports its one (cold) forward time: naive's only timing at T = 4096, where a call takes
// about a minute on two cores.
void register_peak_rss_benchmarks();

// The child's side: `kokkosattn_bench_cpu --rss-child <inputs|naive|portable> <T> <causal>`.
bool is_rss_child(int argc, char* argv[]);
int rss_child_main(int argc, char* argv[]);

} // namespace kattn_bench
