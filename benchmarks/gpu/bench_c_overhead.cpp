// kokkosattn_bench_c_overhead: what the C API (kokkosattn.h) adds per call over the C++ API
// (issue 23's goal: <= 1 us at the codelab shape). The same bf16 problem (B4 T128 N8 H64,
// LayoutRight CudaSpace Views, backend auto) through KokkosAttn::sdpa and through kattn_forward
// on the same memory and stream. Host time of one call, measured while the GPU is still busy with
// an untimed call just before it (so the call returns once enqueued: its host cost alone), then
// the stream is fenced. Median of --reps calls per API and round; the two APIs alternate order
// over --rounds rounds.
#include <KokkosAttn.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kokkosattn.h"

namespace {

using bf16 = Kokkos::Experimental::bhalf_t;
using View4 = Kokkos::View<bf16****, Kokkos::LayoutRight, Kokkos::CudaSpace>;

double median_host_us(const Kokkos::Cuda& exec, int reps, const std::function<void()>& call) {
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    call(); // keeps the GPU busy: not timed
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const auto t1 = std::chrono::steady_clock::now();
    exec.fence("bench_c_overhead");
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

void require(kattn_status_t s, const char* what) {
  if (s != KATTN_OK) {
    std::fprintf(stderr, "bench_c_overhead: %s: %s\n", what, kattn_last_error());
    std::exit(1);
  }
}

} // namespace

int main(int argc, char** argv) {
  int reps = 500, rounds = 6;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (a == "--rounds")
      rounds = std::atoi(argv[i + 1]);
  }
  Kokkos::ScopeGuard guard(argc, argv);
  const Kokkos::Cuda exec;
  const int B = 4, T = 128, N = 8, H = 64;
  View4 q("q", B, T, N, H), k("k", B, T, N, H), v("v", B, T, N, H), out("out", B, T, N, H);
  Kokkos::deep_copy(exec, q, bf16(0.25f));
  Kokkos::deep_copy(exec, k, bf16(-0.5f));
  Kokkos::deep_copy(exec, v, bf16(1.0f));
  exec.fence();
  const KokkosAttn::Options opt;

  require(kattn_initialize(), "kattn_initialize"); // Kokkos is up: a no-op
  kattn_problem_t p = nullptr;
  require(kattn_problem_create(&p), "kattn_problem_create");
  const std::int64_t e[4] = {B, T, N, H};
  require(
      kattn_problem_set_tensor(p, KATTN_Q, q.data(), KATTN_BF16, 4, e, nullptr, KATTN_MEMORY_CUDA),
      "q");
  require(
      kattn_problem_set_tensor(p, KATTN_K, k.data(), KATTN_BF16, 4, e, nullptr, KATTN_MEMORY_CUDA),
      "k");
  require(
      kattn_problem_set_tensor(p, KATTN_V, v.data(), KATTN_BF16, 4, e, nullptr, KATTN_MEMORY_CUDA),
      "v");
  require(kattn_problem_set_tensor(p, KATTN_OUT, out.data(), KATTN_BF16, 4, e, nullptr,
                                   KATTN_MEMORY_CUDA),
          "out");
  void* stream = exec.cuda_stream();
  const auto cpp = [&] { KokkosAttn::sdpa(exec, q, k, v, out, opt); };
  const auto c = [&] { require(kattn_forward(p, stream), "kattn_forward"); };
  const std::string how = KokkosAttn::explain(exec, q, k, v, out, opt);
  std::printf("# %s; B%d T%d N%d H%d bf16, host us per call (median of %d), C - C++ per round\n",
              how.substr(0, how.find(" order")).c_str(), B, T, N, H, reps);
  std::printf("%5s %8s %8s %8s\n", "round", "cpp_us", "c_us", "diff_us");
  std::vector<double> diffs;
  for (int r = 0; r < rounds; ++r) {
    double a = 0, b = 0;
    if (r % 2 == 0) {
      a = median_host_us(exec, reps, cpp);
      b = median_host_us(exec, reps, c);
    } else {
      b = median_host_us(exec, reps, c);
      a = median_host_us(exec, reps, cpp);
    }
    diffs.push_back(b - a);
    std::printf("%5d %8.2f %8.2f %8.2f\n", r + 1, a, b, b - a);
  }
  std::sort(diffs.begin(), diffs.end());
  std::printf("median C - C++: %.2f us per call\n", diffs[diffs.size() / 2]);
  require(kattn_problem_destroy(p), "kattn_problem_destroy");
  return 0;
}
