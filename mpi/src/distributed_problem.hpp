// What the distributed schemes share (mpi/src/ring_forward.cpp, a2a_forward.cpp): what they
// serve, the ranks' agreement on the problem and its geometry, slices of a tensor, and the
// element types and spaces they are instantiated for.
#pragma once

#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <KokkosAttn_DistributedLayout.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kokkos_common/kokkos_scalar.hpp"
#include "kokkos_common/kokkos_target.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/problem.hpp"
#include "ring_geometry.hpp"

namespace kattn::distributed {

// Dense self-attention slices (each rank's k and v hold the same tokens as its q), causal or
// not: per-token tensors (bias, mask, lengths, pages) are refused by name, and windows where
// the scheme cannot place them (the ring: a block pair's mask needs a query offset the options
// cannot express yet; the all-to-all attends the whole sequence in order and serves them).
void check_supported(const ForwardProblem& p, const Dims& d, KokkosAttn::Distributed::Scheme s);

struct Geometry {
  int rank = 0, size = 1;
  std::vector<std::int64_t> lengths;          // every rank's tokens
  std::vector<std::vector<Segment>> segments; // every rank's segments
  Dims d;
};

// Validation (`local`: this rank's checks, returning its dims) and the ranks' agreement on B, N,
// K, H, Hv, dtype, the mask options and the layout (and, for the all-to-all, that P divides K);
// every rank's length. Collective: the same error on every rank.
Geometry agree_on(MPI_Comm comm, const ForwardProblem& p,
                  const KokkosAttn::Distributed::Layout& layout,
                  const std::function<Dims()>& local);

// agree_on with the forward's local checks: validation, what the scheme serves, and that the
// context's execution space reads every tensor.
Geometry agree_on_forward(MPI_Comm comm, const ForwardProblem& p,
                          const KokkosAttn::Distributed::Layout& layout, const ExecContext& x);

// Indices [d0, d0 + n) of dimension `dim` of t, and rows [row0, row0 + n) of a
// [B, L, heads, dim] tensor.
Tensor slice(const Tensor& t, int dim, std::int64_t d0, std::int64_t n);
inline Tensor rows_of(const Tensor& t, std::int64_t row0, std::int64_t n) {
  return slice(t, 1, row0, n);
}
// A contiguous [b, l, h, dim] tensor in memory m.
Tensor contiguous(void* data, DType dt, std::int64_t b, std::int64_t l, std::int64_t h,
                  std::int64_t dim, MemorySpace m);

// f(storage type) for the float dtypes the rings serve.
template <class F>
void with_storage(DType t, const F& f) {
  switch (t) {
  case DType::f64:
    return f(double{});
  case DType::f32:
    return f(float{});
  case DType::f16:
    return f(KokkosAttn::Impl::f16_storage{});
  case DType::bf16:
    return f(KokkosAttn::Impl::bf16_storage{});
  default:
    throw Unsupported("q: the distributed entries serve f64, f32, f16 and bf16, got " +
                      std::string(to_string(t)));
  }
}

// f(exec) on the context's execution space when MPI can read its memory (host-accessible);
// Unsupported otherwise (a GPU-aware or staged path is not built yet).
template <class F>
void on_host_space(const ExecContext& x, const F& f) {
  kokkos_common::on_target("distributed", x, [&](const auto& exec) {
    using Exec = std::decay_t<decltype(exec)>;
    if constexpr (!Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                              typename Exec::memory_space>::accessible)
      throw Unsupported(std::string("distributed: tensors in ") + Exec::name() +
                        " memory need a GPU-aware MPI path, not built yet");
    else
      f(exec);
  });
}

} // namespace kattn::distributed
