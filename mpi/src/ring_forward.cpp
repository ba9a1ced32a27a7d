// The ring forward (issue 26): each rank keeps its queries and passes its keys and values around
// the ring (MPI_Isend/Irecv of the block in hand to the next rank while the local attention
// runs on it), computing its rows against every block with the library's own dispatch, and
// merging the blocks' (out, LSE) exactly (lse_merge.hpp). Blocks no query of the rank can see
// under a causal mask are skipped; the diagonal block is causal top-left, the rest unmasked.
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <KokkosAttn_Distributed.hpp>
#include <KokkosAttn_Sdpa.hpp>

#include <climits>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "collective.hpp"
#include "distributed_problem.hpp"
#include "kokkos_common/layout_copy.hpp"
#include "lse_merge.hpp"

namespace KokkosAttn::Distributed::Impl {
namespace {

using kattn::DType;
using kattn::Tensor;
using kattn::distributed::contiguous;
using kattn::distributed::Geometry;
using kattn::distributed::rows_of;
using kattn::distributed::Segment;
using kattn::distributed::Visibility;

template <class ExecSpace, class T>
void ring(const ExecSpace& exec, MPI_Comm comm, const kattn::ForwardProblem& p, const Geometry& g) {
  using Mem = typename ExecSpace::memory_space;
  using Acc = typename KokkosAttn::Impl::scalar_traits<T>::acc;
  const kattn::Dims& d = g.d;
  const kattn::MemorySpace space = p.q.space;
  const std::int64_t B = d.B, K = d.K, H = d.H, Hv = d.Hv, N = d.N, T_local = d.T;
  const std::size_t elem = sizeof(T);
  std::int64_t max_len = 0;
  for (std::int64_t n : g.lengths)
    max_len = n > max_len ? n : max_len;
  const auto block_elems = [&](std::int64_t len) { return B * len * K * (H + Hv); };
  // MPI counts are int: every rank sees the same lengths, so every rank refuses alike before
  // any exchange (docs/scale-out.md: blocks over 2 GiB are not served yet).
  if (block_elems(max_len) * static_cast<std::int64_t>(elem) > INT_MAX)
    throw kattn::Unsupported(
        "distributed: a ring block of " +
        std::to_string(block_elems(max_len) * static_cast<std::int64_t>(elem)) +
        " bytes (MPI counts are int; over 2 GiB not served yet)");

  // Two blocks of K then V, contiguous [B, len, K, H] and [B, len, K, Hv]; MPI reads them where
  // they are (host memory here; device memory needs a GPU-aware MPI: not served yet).
  Kokkos::View<char*, Mem> buf[2] = {
      Kokkos::View<char*, Mem>("KokkosAttn::Distributed::kv0", block_elems(max_len) * elem),
      Kokkos::View<char*, Mem>("KokkosAttn::Distributed::kv1", block_elems(max_len) * elem)};
  const auto k_of = [&](int i, std::int64_t len) {
    return contiguous(buf[i].data(), p.k.dtype, B, len, K, H, space);
  };
  const auto v_of = [&](int i, std::int64_t len) {
    return contiguous(buf[i].data() + B * len * K * H * elem, p.v.dtype, B, len, K, Hv, space);
  };
  const kattn::ExecContext x = KokkosAttn::make_exec_context(exec);
  // A failure past this point must not leave the other ranks waiting for this one's blocks: it
  // is kept, the ring completes, and it is rethrown (then agreed on) after the last exchange.
  std::exception_ptr failed;
  const auto guarded = [&](const auto& f) {
    if (!failed)
      try {
        f();
      } catch (...) {
        failed = std::current_exception();
      }
  };
  // (copy_tensor refuses tensors without data: a rank holding no tokens copies nothing.)
  if (T_local > 0)
    guarded([&] {
      kattn::kokkos_common::copy_tensor(x, p.k, k_of(0, T_local));
      kattn::kokkos_common::copy_tensor(x, p.v, v_of(0, T_local));
    });

  kattn::distributed::Accumulators<Acc, Mem> acc{
      Kokkos::View<Acc****, Kokkos::LayoutRight, Mem>("KokkosAttn::Distributed::o", B, T_local, N,
                                                      Hv),
      Kokkos::View<Acc***, Kokkos::LayoutRight, Mem>("KokkosAttn::Distributed::lse", B, N,
                                                     T_local)};
  Kokkos::deep_copy(exec, acc.lse, -Kokkos::Experimental::infinity_v<Acc>);
  Kokkos::View<char*, Mem> out_b("KokkosAttn::Distributed::out_block", B * T_local * N * Hv * elem);
  Kokkos::View<float*, Mem> lse_b("KokkosAttn::Distributed::lse_block", B * N * T_local);

  const int next = (g.rank + 1) % g.size, prev = (g.rank + g.size - 1) % g.size;
  for (int step = 0, cur = 0; step < g.size; ++step, cur ^= 1) {
    const int src = (g.rank + g.size - step) % g.size;          // whose block is in hand
    const int incoming = (g.rank + g.size - step - 1) % g.size; // whose block comes next
    const std::int64_t len = g.lengths[std::size_t(src)];
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    exec.fence("KokkosAttn::Distributed: block ready to send");
    if (step + 1 < g.size) {
      const auto in_bytes = block_elems(g.lengths[std::size_t(incoming)]) * elem;
      const auto out_bytes = block_elems(len) * elem;
      kattn::distributed::check_mpi(MPI_Irecv(buf[cur ^ 1].data(), static_cast<int>(in_bytes),
                                              MPI_BYTE, prev, step, comm, &req[0]),
                                    "MPI_Irecv");
      kattn::distributed::check_mpi(MPI_Isend(buf[cur].data(), static_cast<int>(out_bytes),
                                              MPI_BYTE, next, step, comm, &req[1]),
                                    "MPI_Isend");
    }
    for (const Segment& qs : g.segments[std::size_t(g.rank)])
      for (const Segment& ks : g.segments[std::size_t(src)]) {
        const Visibility vis = kattn::distributed::visibility(qs, ks, p.options.causal);
        if (vis == Visibility::none)
          continue;
        kattn::ForwardProblem sub;
        sub.q = rows_of(p.q, qs.local, qs.length);
        sub.k = rows_of(k_of(cur, len), ks.local, ks.length);
        sub.v = rows_of(v_of(cur, len), ks.local, ks.length);
        sub.out = contiguous(out_b.data(), p.out.dtype, B, qs.length, N, Hv, space);
        sub.extras.lse = Tensor::contiguous(lse_b.data(), DType::f32, {B, N, qs.length});
        sub.extras.lse.space = space;
        sub.options = p.options;
        sub.options.causal = vis == Visibility::causal_diagonal;
        sub.options.alignment = kattn::Alignment::top_left;
        sub.options.window_left = sub.options.window_right = -1;
        sub.options.scale = d.scale; // the global head dim's, resolved once
        guarded([&] {
          KokkosAttn::sdpa(exec, sub);
          kattn::distributed::merge_block<T>(exec, acc, out_b.data(), lse_b.data(), qs.local,
                                             qs.length);
        });
      }
    if (step + 1 < g.size)
      kattn::distributed::check_mpi(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
  if (failed)
    std::rethrow_exception(failed);
  if (T_local == 0)
    return;
  // out and lse through contiguous scratch into the caller's strides.
  Kokkos::View<float*, Mem> lse_out("KokkosAttn::Distributed::lse_out",
                                    p.extras.lse.defined() ? B * N * T_local : 0);
  kattn::distributed::write_result<T>(exec, acc, out_b.data(),
                                      p.extras.lse.defined() ? lse_out.data() : nullptr);
  kattn::kokkos_common::copy_tensor(
      x, contiguous(out_b.data(), p.out.dtype, B, T_local, N, Hv, space), p.out);
  if (p.extras.lse.defined()) {
    Tensor l = Tensor::contiguous(lse_out.data(), DType::f32, {B, N, T_local});
    l.space = space;
    kattn::kokkos_common::copy_tensor(x, l, p.extras.lse);
  }
  exec.fence("KokkosAttn::Distributed: scratch released");
}

} // namespace

void ring_forward(const kattn::ExecContext& x, MPI_Comm comm, const kattn::ForwardProblem& p,
                  const Layout& layout) {
  const Geometry g = kattn::distributed::agree_on_forward(comm, p, layout, x);
  kattn::distributed::agree(comm, [&] {
    kattn::distributed::on_host_space(x, [&](const auto& exec) {
      using Exec = std::decay_t<decltype(exec)>;
      kattn::distributed::with_storage(
          p.q.dtype, [&](auto tag) { ring<Exec, decltype(tag)>(exec, comm, p, g); });
    });
  });
}

} // namespace KokkosAttn::Distributed::Impl
