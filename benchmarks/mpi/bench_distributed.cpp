// The distributed forward's time on the host (issue 26): one global problem split over the ranks
// of MPI_COMM_WORLD, timed end to end (MPI_Barrier, the call, MPI_Barrier), median of --repeats;
// rank 0 prints one JSON line per configuration (the global FLOPs 4 B N T^2 H, halved causal).
// Compare P ranks x 1 thread with 1 rank x P threads (scripts/bench-distributed.sh).
//
//   mpiexec -n P kokkosattn_bench_distributed [--T 16384] [--N 4] [--K 4] [--H 64]
//       [--scheme ring,all_to_all] [--causal 0,1] [--split contiguous|zigzag] [--repeats 3]
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <KokkosAttn_Distributed.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gpu/bench_text.hpp"
#include "kokkosattn/errors.hpp"

namespace {

using kattn::DType;
using kattn::Tensor;
using KokkosAttn::Distributed::Layout;
using KokkosAttn::Distributed::Scheme;

struct Args {
  std::int64_t T = 16384, N = 4, K = 4, H = 64;
  int repeats = 3;
  std::vector<std::string> schemes{"ring", "all_to_all"};
  std::vector<std::int64_t> causal{0, 1};
  std::string split = "contiguous"; // zigzag: T divisible by 2 P
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--T")
      a.T = std::stoll(v);
    else if (k == "--N")
      a.N = std::stoll(v);
    else if (k == "--K")
      a.K = std::stoll(v);
    else if (k == "--H")
      a.H = std::stoll(v);
    else if (k == "--repeats")
      a.repeats = std::stoi(v);
    else if (k == "--scheme")
      a.schemes = kattn_bench::split(v);
    else if (k == "--causal")
      a.causal = kattn_bench::ints(v);
    else if (k == "--split")
      a.split = v;
    else
      throw kattn::InvalidArgument("unknown argument " + k);
  }
  return a;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Kokkos::initialize(argc, argv);
  int rc = 0;
  try {
    const Args a = parse(argc, argv);
    // Contiguous blocks; the last rank takes the remainder.
    const std::int64_t base = a.T / size;
    const std::int64_t Tl = rank + 1 == size ? a.T - base * (size - 1) : base;
    std::vector<float> q(std::size_t(Tl * a.N * a.H)), k(std::size_t(Tl * a.K * a.H)), v(k.size()),
        o(q.size());
    std::mt19937 rng(static_cast<unsigned>(rank) + 7);
    std::normal_distribution<float> nd;
    for (auto* x : {&q, &k, &v})
      for (float& y : *x)
        y = nd(rng);
    kattn::ForwardProblem p;
    p.q = Tensor::contiguous(q.data(), DType::f32, {1, Tl, a.N, a.H});
    p.k = Tensor::contiguous(k.data(), DType::f32, {1, Tl, a.K, a.H});
    p.v = Tensor::contiguous(v.data(), DType::f32, {1, Tl, a.K, a.H});
    p.out = Tensor::contiguous(o.data(), DType::f32, {1, Tl, a.N, a.H});
    const Kokkos::DefaultHostExecutionSpace host;
    for (const std::string& scheme : a.schemes)
      for (std::int64_t causal : a.causal) {
        Layout layout;
        layout.scheme = scheme == "all_to_all" ? Scheme::all_to_all : Scheme::ring;
        layout.split = a.split == "zigzag" ? KokkosAttn::Distributed::Split::zigzag
                                           : KokkosAttn::Distributed::Split::contiguous;
        p.options.causal = causal != 0;
        std::vector<double> ms;
        for (int r = 0; r < a.repeats + 1; ++r) { // the first is a warm-up
          MPI_Barrier(MPI_COMM_WORLD);
          const double t0 = MPI_Wtime();
          KokkosAttn::Distributed::sdpa(host, MPI_COMM_WORLD, p, layout);
          MPI_Barrier(MPI_COMM_WORLD);
          if (r > 0)
            ms.push_back((MPI_Wtime() - t0) * 1e3);
        }
        std::sort(ms.begin(), ms.end());
        const double med = ms[ms.size() / 2];
        const double flops =
            4.0 * a.N * double(a.T) * double(a.T) * double(a.H) * (causal ? 0.5 : 1.0);
        if (rank == 0)
          std::printf(
              "{\"exp\": \"distributed\", \"scheme\": \"%s\", \"split\": \"%s\", \"ranks\": %d, "
              "\"threads_per_rank\": %d, \"T\": %lld, \"N\": %lld, \"K\": %lld, "
              "\"H\": %lld, \"causal\": %s, \"ms\": %.1f, \"gflops\": %.2f}\n",
              scheme.c_str(), a.split.c_str(), size,
              Kokkos::DefaultHostExecutionSpace().concurrency(), static_cast<long long>(a.T),
              static_cast<long long>(a.N), static_cast<long long>(a.K), static_cast<long long>(a.H),
              causal ? "true" : "false", med, flops / med / 1e6);
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    rc = 1;
  }
  Kokkos::finalize();
  MPI_Finalize();
  return rc;
}
