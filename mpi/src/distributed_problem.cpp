#include "distributed_problem.hpp"

#include <utility>

#include "collective.hpp"
#include "kokkosattn/dtype.hpp"
#include "kokkosattn/validate.hpp"

namespace kattn::distributed {

void check_supported(const ForwardProblem& p, const Dims& d, KokkosAttn::Distributed::Scheme s) {
  const Extras& e = p.extras;
  const std::pair<const Tensor*, const char*> refused[] = {{&e.bias, "extras.bias"},
                                                           {&e.mask, "extras.mask"},
                                                           {&e.alibi_slopes, "extras.alibi_slopes"},
                                                           {&e.sinks, "extras.sinks"},
                                                           {&e.seqlens_q, "extras.seqlens_q"},
                                                           {&e.seqlens_k, "extras.seqlens_k"},
                                                           {&e.cu_seqlens_q, "extras.cu_seqlens_q"},
                                                           {&e.page_table, "extras.page_table"},
                                                           {&e.fp8.descale_q, "extras.fp8"}};
  for (const auto& [t, name] : refused)
    if (t->defined())
      throw Unsupported(std::string(name) + ": not served by the distributed entries yet (dense "
                                            "self-attention slices, causal or not)");
  if (s == KokkosAttn::Distributed::Scheme::ring &&
      (p.options.window_left >= 0 || (p.options.window_right >= 0 && !p.options.causal)))
    throw Unsupported("options.window: not served by the ring yet (the all-to-all serves it: "
                      "layout.scheme = Scheme::all_to_all)");
  if (p.options.dropout_p > 0.0)
    throw Unsupported("options.dropout_p: not served by the distributed entries yet");
  if (d.T != d.S)
    throw InvalidArgument("k: expected the rank's keys for its own tokens (self-attention: "
                          "S_local == T_local = " +
                          std::to_string(d.T) + "), got S_local = " + std::to_string(d.S));
}

Tensor slice(const Tensor& t, int dim, std::int64_t d0, std::int64_t n) {
  Tensor s = t;
  s.data = static_cast<char*>(t.data) +
           d0 * t.stride[std::size_t(dim)] * static_cast<std::int64_t>(size_bytes(t.dtype));
  s.extent[std::size_t(dim)] = n;
  return s;
}

Tensor contiguous(void* data, DType dt, std::int64_t b, std::int64_t l, std::int64_t h,
                  std::int64_t dim, MemorySpace m) {
  Tensor t = Tensor::contiguous(data, dt, {b, l, h, dim});
  t.space = m;
  return t;
}

// Validation and the ranks' agreement (collective): the same error on every rank.
Geometry agree_on(MPI_Comm comm, const ForwardProblem& p,
                  const KokkosAttn::Distributed::Layout& layout,
                  const std::function<Dims()>& local) {
  Geometry g;
  check_mpi(MPI_Comm_rank(comm, &g.rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &g.size), "MPI_Comm_size");
  constexpr std::size_t kAgreed = 12; // then the rank's own length
  std::vector<std::int64_t> mine(kAgreed + 1, -1);
  agree(comm, [&] {
    g.d = local();
    mine = {g.d.B,
            g.d.N,
            g.d.K,
            g.d.H,
            g.d.Hv,
            static_cast<std::int64_t>(p.q.dtype),
            p.options.causal,
            static_cast<std::int64_t>(layout.split),
            static_cast<std::int64_t>(layout.scheme),
            p.options.window_left, // as asked: resolved ones depend on the local lengths
            p.options.window_right,
            p.extras.lse.defined(),
            g.d.T};
  });
  const auto all = all_gather(comm, mine);
  agree(comm, [&] {
    static const char* names[kAgreed] = {"B",
                                         "N",
                                         "K",
                                         "H",
                                         "Hv",
                                         "dtype",
                                         "options.causal",
                                         "layout.split",
                                         "layout.scheme",
                                         "window_left",
                                         "window_right",
                                         "extras.lse (given or not)"};
    for (int r = 0; r < g.size; ++r)
      for (std::size_t i = 0; i < kAgreed; ++i)
        if (all[std::size_t(r)][i] != all[0][i])
          throw InvalidArgument(std::string(names[i]) +
                                ": expected every rank to agree, "
                                "got " +
                                std::to_string(all[0][i]) + " on rank 0 and " +
                                std::to_string(all[std::size_t(r)][i]) + " on rank " +
                                std::to_string(r));
    for (int r = 0; r < g.size; ++r)
      g.lengths.push_back(all[std::size_t(r)][kAgreed]);
    g.segments = rank_segments(layout.split, g.lengths);
    if (layout.scheme == KokkosAttn::Distributed::Scheme::all_to_all && g.d.K % g.size != 0)
      throw InvalidArgument("layout.scheme: the all-to-all over heads needs the ranks (" +
                            std::to_string(g.size) +
                            ") to divide the key/value heads K = " + std::to_string(g.d.K));
  });
  return g;
}

Geometry agree_on_forward(MPI_Comm comm, const ForwardProblem& p,
                          const KokkosAttn::Distributed::Layout& layout, const ExecContext& x) {
  return agree_on(comm, p, layout, [&] {
    const Dims d = validate(p);
    check_supported(p, d, layout.scheme);
    const Support s =
        kokkos_common::check_runnable("distributed", p.q.dtype, kokkos_common::named_tensors(p), x);
    if (!s.ok)
      throw Unsupported(s.reason);
    return d;
  });
}

} // namespace kattn::distributed
