// The all-to-all forward (Ulysses, issue 26): q, k, v go from sequence-sharded to head-sharded
// (rank g gets every token of query heads [g N/P, (g+1) N/P) and key/value heads
// [g K/P, (g+1) K/P)), each rank attends the whole sequence in global order through the library's
// own dispatch (so every mask option applies as on one device, windows included), and out (and
// LSE) go back. Two MPI_Alltoallv per direction-tensor; the packing and the placing of rows in
// global order are strided copies on the caller's space (kokkos_common::copy_tensor).
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <KokkosAttn_Distributed.hpp>
#include <KokkosAttn_Sdpa.hpp>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "collective.hpp"
#include "distributed_problem.hpp"
#include "kokkos_common/layout_copy.hpp"

namespace KokkosAttn::Distributed::Impl {
namespace {

using kattn::DType;
using kattn::Tensor;
using kattn::distributed::check_mpi;
using kattn::distributed::contiguous;
using kattn::distributed::Geometry;
using kattn::distributed::rows_of;
using kattn::distributed::Segment;
using kattn::distributed::slice;

// One tensor's exchange: every rank sends rank g the rows of its tokens for head group g and
// receives the rows of rank s's tokens for its own group, in rank order.
struct Exchange {
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs; // bytes
};
Exchange exchange_of(const std::vector<std::int64_t>& send_rows,
                     const std::vector<std::int64_t>& recv_rows, std::int64_t row_bytes) {
  Exchange e;
  int at = 0;
  for (std::int64_t r : send_rows) {
    e.send_counts.push_back(static_cast<int>(r * row_bytes));
    e.send_displs.push_back(at);
    at += e.send_counts.back();
  }
  at = 0;
  for (std::int64_t r : recv_rows) {
    e.recv_counts.push_back(static_cast<int>(r * row_bytes));
    e.recv_displs.push_back(at);
    at += e.recv_counts.back();
  }
  return e;
}

void all_to_all(const Exchange& e, const void* send, void* recv, MPI_Comm comm) {
  check_mpi(MPI_Alltoallv(send, e.send_counts.data(), e.send_displs.data(), MPI_BYTE, recv,
                          e.recv_counts.data(), e.recv_displs.data(), MPI_BYTE, comm),
            "MPI_Alltoallv");
}

template <class ExecSpace>
void a2a(const ExecSpace& exec, MPI_Comm comm, const kattn::ForwardProblem& p, const Geometry& g) {
  using Mem = typename ExecSpace::memory_space;
  const kattn::Dims& d = g.d;
  const kattn::MemorySpace space = p.q.space;
  const int P = g.size;
  const std::int64_t B = d.B, H = d.H, Hv = d.Hv, T_local = d.T;
  const std::int64_t Ng = d.N / P, Kg = d.K / P; // heads per group
  std::int64_t T = 0;
  for (std::int64_t n : g.lengths)
    T += n;
  const std::size_t elem = kattn::size_bytes(p.q.dtype);
  const kattn::ExecContext x = KokkosAttn::make_exec_context(exec);
  const auto bytes_fit = [&](std::int64_t b) {
    if (b > INT_MAX)
      throw kattn::Unsupported("distributed: an all-to-all message of " + std::to_string(b) +
                               " bytes (MPI counts are int; over 2 GiB not served yet)");
  };
  bytes_fit(B * T * d.N * std::max(H, Hv) * static_cast<std::int64_t>(elem));

  // Sequence -> heads for one input: send buffer [P][B, T_local, heads/P, dim] (group-major),
  // receive buffer [P][B, T_s, heads/P, dim] (source-major), then rows to global order.
  const auto to_heads = [&](const Tensor& local, std::int64_t heads, std::int64_t dim,
                            Kokkos::View<char*, Mem>& full) {
    const std::int64_t hg = heads / P;
    Kokkos::View<char*, Mem> send("KokkosAttn::Distributed::a2a_send",
                                  B * T_local * heads * dim * elem);
    Kokkos::View<char*, Mem> recv("KokkosAttn::Distributed::a2a_recv", B * T * hg * dim * elem);
    full = Kokkos::View<char*, Mem>("KokkosAttn::Distributed::a2a_full", B * T * hg * dim * elem);
    std::vector<std::int64_t> send_rows(std::size_t(P), B * T_local), recv_rows;
    for (int s = 0; s < P; ++s)
      recv_rows.push_back(B * g.lengths[std::size_t(s)]);
    if (T_local > 0)
      for (int grp = 0; grp < P; ++grp)
        kattn::kokkos_common::copy_tensor(
            x, slice(local, 2, grp * hg, hg),
            contiguous(send.data() + grp * B * T_local * hg * dim * elem, local.dtype, B, T_local,
                       hg, dim, space));
    exec.fence("KokkosAttn::Distributed: a2a send buffer");
    all_to_all(exchange_of(send_rows, recv_rows, hg * dim * static_cast<std::int64_t>(elem)),
               send.data(), recv.data(), comm);
    std::int64_t at = 0;
    const Tensor whole = contiguous(full.data(), local.dtype, B, T, hg, dim, space);
    for (int s = 0; s < P; ++s) {
      const std::int64_t Ts = g.lengths[std::size_t(s)];
      const Tensor from = contiguous(recv.data() + at, local.dtype, B, Ts, hg, dim, space);
      for (const Segment& seg : g.segments[std::size_t(s)])
        kattn::kokkos_common::copy_tensor(x, rows_of(from, seg.local, seg.length),
                                          rows_of(whole, seg.global, seg.length));
      at += B * Ts * hg * dim * static_cast<std::int64_t>(elem);
    }
  };
  Kokkos::View<char*, Mem> qf, kf, vf;
  to_heads(p.q, d.N, H, qf);
  to_heads(p.k, d.K, H, kf);
  to_heads(p.v, d.K, Hv, vf);

  // The whole sequence over this rank's head group.
  Kokkos::View<char*, Mem> of("KokkosAttn::Distributed::a2a_out", B * T * Ng * Hv * elem);
  Kokkos::View<float*, Mem> lf("KokkosAttn::Distributed::a2a_lse",
                               p.extras.lse.defined() ? B * Ng * T : 0);
  kattn::ForwardProblem full = p;
  full.q = contiguous(qf.data(), p.q.dtype, B, T, Ng, H, space);
  full.k = contiguous(kf.data(), p.k.dtype, B, T, Kg, H, space);
  full.v = contiguous(vf.data(), p.v.dtype, B, T, Kg, Hv, space);
  full.out = contiguous(of.data(), p.out.dtype, B, T, Ng, Hv, space);
  full.extras.lse = Tensor();
  if (p.extras.lse.defined()) {
    full.extras.lse = Tensor::contiguous(lf.data(), DType::f32, {B, Ng, T});
    full.extras.lse.space = space;
  }
  if (T > 0)
    KokkosAttn::sdpa(exec, full);

  // Heads -> sequence: out rows of rank g's tokens for this group go to rank g.
  const auto to_sequence = [&](const Tensor& whole, int row_dim, std::int64_t inner,
                               const Tensor& local, int head_dim, std::int64_t hg) {
    const std::int64_t row_bytes = static_cast<std::int64_t>(kattn::size_bytes(whole.dtype)) *
                                   inner; // bytes per (b, row) of one group
    Kokkos::View<char*, Mem> send("KokkosAttn::Distributed::a2a_back_send", B * T * row_bytes);
    Kokkos::View<char*, Mem> recv("KokkosAttn::Distributed::a2a_back_recv",
                                  P * B * T_local * row_bytes);
    std::vector<std::int64_t> send_rows, recv_rows(std::size_t(P), B * T_local);
    std::int64_t at = 0;
    for (int dst = 0; dst < P; ++dst) {
      const std::int64_t Td = g.lengths[std::size_t(dst)];
      send_rows.push_back(B * Td);
      // [B, Td, heads, dim] or (LSE) [B, heads, Td], contiguous in the send buffer
      Tensor to = row_dim == 1
                      ? contiguous(send.data() + at, whole.dtype, B, Td, whole.extent[2],
                                   whole.extent[3], space)
                      : Tensor::contiguous(send.data() + at, whole.dtype, {B, whole.extent[1], Td});
      to.space = space;
      for (const Segment& seg : g.segments[std::size_t(dst)])
        kattn::kokkos_common::copy_tensor(x, slice(whole, row_dim, seg.global, seg.length),
                                          slice(to, row_dim, seg.local, seg.length));
      at += B * Td * row_bytes;
    }
    exec.fence("KokkosAttn::Distributed: a2a back send buffer");
    all_to_all(exchange_of(send_rows, recv_rows, row_bytes), send.data(), recv.data(), comm);
    if (T_local == 0)
      return;
    for (int src = 0; src < P; ++src) {
      Tensor from = row_dim == 1
                        ? contiguous(recv.data() + src * B * T_local * row_bytes, whole.dtype, B,
                                     T_local, whole.extent[2], whole.extent[3], space)
                        : Tensor::contiguous(recv.data() + src * B * T_local * row_bytes,
                                             whole.dtype, {B, whole.extent[1], T_local});
      from.space = space;
      kattn::kokkos_common::copy_tensor(x, from, slice(local, head_dim, src * hg, hg));
    }
  };
  to_sequence(full.out, 1, Ng * Hv, p.out, 2, Ng);
  if (p.extras.lse.defined())
    to_sequence(full.extras.lse, 2, Ng, p.extras.lse, 1, Ng);
  exec.fence("KokkosAttn::Distributed: scratch released");
}

} // namespace

void a2a_forward(const kattn::ExecContext& x, MPI_Comm comm, const kattn::ForwardProblem& p,
                 const Layout& layout) {
  const Geometry g = kattn::distributed::agree_on_forward(comm, p, layout, x);
  // Collective calls inside: a failure on one rank would leave the others waiting in
  // MPI_Alltoallv, so every check that can fail ran above; what remains is the run itself.
  kattn::distributed::agree(comm, [&] {
    kattn::distributed::on_host_space(x, [&](const auto& exec) { a2a(exec, comm, p, g); });
  });
}

} // namespace KokkosAttn::Distributed::Impl
