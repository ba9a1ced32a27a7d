// Context parallelism from a domain-decomposed code (docs/scale-out.md): each MPI rank holds its
// own block of a sequence's tokens in Kokkos Views and calls KokkosAttn::Distributed::sdpa; here
// every rank also computes the whole sequence alone and checks that its rows agree.
//
//   mpiexec -n 4 ./ring_attention
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <KokkosAttn.hpp>
#include <KokkosAttn_Distributed.hpp>

#include <cmath>
#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Kokkos::initialize(argc, argv);
  int bad = 0;
  {
    using View = Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::HostSpace>;
    const int B = 1, N = 4, H = 32, per_rank = 64, T = per_rank * ranks;
    // The global sequence (the same on every rank here, to check the result), and this rank's
    // block of it: tokens [rank * per_rank, (rank + 1) * per_rank).
    View q("q", B, T, N, H), k("k", B, T, N, H), v("v", B, T, N, H), out("out", B, T, N, H);
    for (int t = 0; t < T; ++t)
      for (int n = 0; n < N; ++n)
        for (int h = 0; h < H; ++h) {
          q(0, t, n, h) = std::sin(0.1f * (t + 3 * n + 7 * h));
          k(0, t, n, h) = std::cos(0.2f * (t - n + 5 * h));
          v(0, t, n, h) = std::sin(0.3f * (2 * t + n - h));
        }
    const auto mine = std::make_pair(rank * per_rank, (rank + 1) * per_rank);
    auto block = [&](const View& x) {
      View b("block", B, per_rank, N, H);
      Kokkos::deep_copy(b, Kokkos::subview(x, Kokkos::ALL, mine, Kokkos::ALL, Kokkos::ALL));
      return b;
    };
    View ql = block(q), kl = block(k), vl = block(v), ol("out_local", B, per_rank, N, H);
    KokkosAttn::Options opt;
    opt.causal = true;
    const Kokkos::DefaultHostExecutionSpace exec;
    KokkosAttn::Distributed::Layout layout; // contiguous blocks, the ring
    KokkosAttn::Distributed::sdpa(exec, MPI_COMM_WORLD, ql, kl, vl, ol, opt, layout);
    KokkosAttn::sdpa(exec, q, k, v, out, opt); // the whole sequence on this rank alone
    exec.fence();
    double err = 0;
    for (int t = 0; t < per_rank; ++t)
      for (int n = 0; n < N; ++n)
        for (int h = 0; h < H; ++h)
          err = std::fmax(err, std::fabs(ol(0, t, n, h) - out(0, mine.first + t, n, h)));
    bad = err > 1e-5;
    std::printf("rank %d of %d: tokens [%d, %d), max |distributed - single| = %.2e\n", rank, ranks,
                mine.first, mine.second, err);
  }
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  Kokkos::finalize();
  MPI_Finalize();
  return any;
}
