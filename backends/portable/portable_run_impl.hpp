// Host-side launch of the portable kernels for one execution space (see portable_run.hpp).
// Included only by portable_run_<space>.cpp.
#pragma once

#include <Kokkos_Core.hpp>

#include <exception>
#include <limits>
#include <string>
#include <type_traits>

#include "kokkos_common/kokkos_scalar.hpp"
#include "kokkos_common/light_launch.hpp"
#include "kokkosattn/errors.hpp"
#include "portable/portable_backward_kernel.hpp"
#include "portable/portable_device_backward_kernel.hpp"
#include "portable/portable_device_forward_kernel.hpp"
#include "portable/portable_device_row_stats.hpp"
#include "portable/portable_forward_kernel.hpp"
#include "portable/portable_kernel_choice.hpp"
#include "portable/portable_paged_gather.hpp"
#include "portable/portable_params.hpp"
#include "portable/portable_run.hpp"

namespace kattn::portable {
namespace detail {

template <class ExecSpace>
inline constexpr bool on_host =
    Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

// Kokkos takes a league size as an int: a larger one is refused before anything is written.
inline void check_league(Index league, const char* name) {
  if (league > std::numeric_limits<int>::max())
    throw Unsupported(std::string("portable: ") + name + " needs " + std::to_string(league) +
                      " teams, more than a Kokkos league's 2^31 - 1; split the batch or heads");
}

// One team per league entry. On host spaces a team is one thread (the tile products vectorise
// within it); on GPUs the team's threads share the register blocks of each tile product.
// Scratch goes to level 0 when it fits, else level 1 (large head dims on GPUs).
template <class ExecSpace, class Kernel>
void launch(const char* name, const ExecSpace& exec, Kernel kernel, Index league,
            std::size_t bytes) {
  if (league <= 0)
    return;
  check_league(league, name);
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  auto policy = kokkos_common::light_launch(
      on_host<ExecSpace> ? Policy(exec, static_cast<int>(league), 1)
                         : Policy(exec, static_cast<int>(league), Kokkos::AUTO));
  kernel.level = bytes <= static_cast<std::size_t>(Policy::scratch_size_max(0)) ? 0 : 1;
  if (kernel.level == 1 && bytes > static_cast<std::size_t>(Policy::scratch_size_max(1)))
    throw BackendFailure(std::string("portable: ") + name + " needs " + std::to_string(bytes) +
                         " bytes of team scratch, more than the space's maximum " +
                         std::to_string(Policy::scratch_size_max(1)));
  policy.set_scratch_size(kernel.level, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for(name, policy, kernel);
}

// The fields every forward kernel has: the problem's Common part and its q, k, v, out rows.
template <class T, class Kernel>
void fill_forward_io(Kernel& kern, const ForwardProblem& p, const Dims& d) {
  kern.c = make_common(p, d);
  kern.q = make_rows<const T>(p.q, d.packed);
  kern.k = make_rows<const T>(p.k, d.packed);
  kern.v = make_rows<const T>(p.v, d.packed);
  kern.out = make_rows<T>(p.out, d.packed);
}

// A device kernel (portable_device_*_kernel.hpp): fixed teams of Kernel::kThreads with level-0
// scratch only (its size is fixed at compile time, under every GPU's 48 KB). Enqueued on exec,
// no fence.
template <class ExecSpace, class Kernel>
void launch_device(const char* name, const ExecSpace& exec, const Kernel& kern, Index league) {
  using Policy = typename Kernel::Policy;
  check_league(league, name);
  if (league == 0)
    return;
  const std::size_t bytes = Kernel::scratch_size();
  if (bytes > static_cast<std::size_t>(Policy::scratch_size_max(0)))
    throw BackendFailure(std::string("portable: ") + name + " needs " + std::to_string(bytes) +
                         " bytes of level-0 team scratch, more than the space's " +
                         std::to_string(Policy::scratch_size_max(0)));
  auto policy =
      kokkos_common::light_launch(Policy(exec, static_cast<int>(league), Kernel::kThreads, 1));
  policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for(name, policy, kern);
}

// The device forward (portable_device_forward_kernel.hpp).
template <class ExecSpace, class T, int HV, bool kExtras>
void forward_device(const ExecSpace& exec, const ForwardProblem& p, const Dims& d) {
  using Kernel = DeviceForwardKernel<ExecSpace, T, HV, kExtras>;
  Kernel kern;
  fill_forward_io<T>(kern, p, d);
  kern.n_qblocks = (d.T + Kernel::Br - 1) / Kernel::Br;
  launch_device("KokkosAttn::portable::forward_device", exec, kern, d.B * d.N * kern.n_qblocks);
}

inline Index blocks(Index len, int tile) {
  return (len + tile - 1) / tile;
}

// The forward reads each K/V tile once per query block. In the usual [B, S, K, H] layout with
// several KV heads one head's rows are K * H elements apart (2 KiB for the benchmark's fp32,
// K = 8, H = 64): a tile spans many pages and few L1 sets, and fetching it cost 8-14% of the
// host forward (docs/performance.md). On host spaces, fp32 K/V with interleaved heads are
// therefore copied, a few (batch, KV head) pairs at a time, into contiguous [pair][S][H] rows
// once per forward (10-20% faster at S = 2048-4096); the extra memory is at most pack_bytes, or
// one pair's K and V. Only where one pair's K and V fill a 512 KiB L2 (S >= 1024 at
// H = Hv = 64): below that they stay in L2 between query blocks and the copy cost more than it
// saved (S = 256: 14.5 ms against 11.4, single thread).
inline constexpr std::size_t pack_bytes = std::size_t(4) << 20;
inline constexpr std::size_t pack_min_bytes = std::size_t(512) << 10;

template <class ExecSpace, class T>
inline constexpr bool may_pack_kv = on_host<ExecSpace> && std::is_same_v<T, float>;

template <class T>
bool pack_kv_heads(const Rows<const T>& k, const Rows<const T>& v, const Dims& d) {
  return !d.packed && d.B * d.K * d.T > 0 && k.sd == 1 && v.sd == 1 &&
         (k.st != d.H || v.st != d.Hv) &&
         static_cast<std::size_t>(d.S * (d.H + d.Hv)) * sizeof(T) >= pack_min_bytes;
}

inline constexpr Index copy_ahead = 8; // rows prefetched ahead by copy_heads on AVX hosts

// Rows of pairs [p0, p0 + np) (pair = b * K + kh) into kd[(pair - p0) * S + s][H] and
// vd[(pair - p0) * S + s][Hv].
template <class ExecSpace, class T>
void copy_heads(const ExecSpace& exec, const Rows<const T>& k, const Rows<const T>& v, T* kd, T* vd,
                Index p0, Index np, const Dims& d) {
  const Index K = d.K, S = d.S, H = d.H, Hv = d.Hv;
  Kokkos::parallel_for(
      "KokkosAttn::portable::copy_kv_heads", Kokkos::RangePolicy<ExecSpace>(exec, 0, np * S),
      KOKKOS_LAMBDA(const Index idx) {
        const Index pair = p0 + idx / S, s = idx % S;
        const Index b = pair / K, kh = pair % K;
        const T* ks = k.data + k.at(b, s, kh, 0);
        const T* vs = v.data + v.at(b, s, kh, 0);
#ifdef KATTN_PORTABLE_HOST_VECTORS
        // Each thread copies a run of rows in order: request a later row's lines now (the rows
        // are 2 KiB apart, a stride the hardware prefetchers do not follow across pages).
        if (s + copy_ahead < S) {
          host_vectors::prefetch_read(ks + copy_ahead * k.st, static_cast<int>(H * sizeof(T)));
          host_vectors::prefetch_read(vs + copy_ahead * v.st, static_cast<int>(Hv * sizeof(T)));
        }
#endif
        using Traits = KokkosAttn::Impl::scalar_traits<T>;
        load_row<Traits>(kd + idx * H, ks, 1, static_cast<int>(H), T(1));
        load_row<Traits>(vd + idx * Hv, vs, 1, static_cast<int>(Hv), T(1));
      });
}

template <class ExecSpace, class T>
void forward_typed(const ExecSpace& exec, const ForwardProblem& p, const Dims& d) {
  if (d.paged) { // (portable_paged_gather.hpp)
    with_gathered_pages<ExecSpace, T>(exec, p, d, [&](const ForwardProblem& f, const Dims& fd) {
      forward_typed<ExecSpace, T>(exec, f, fd);
    });
    return;
  }
  if constexpr (!on_host<ExecSpace>) {
    if (const ForwardChoice choice = choose_forward(true, d); choice.device) {
      const Common c = make_common(p, d);
      const bool extras = c.has_score_extras() || c.dropout;
      if (choice.hv == 64)
        extras ? forward_device<ExecSpace, T, 64, true>(exec, p, d)
               : forward_device<ExecSpace, T, 64, false>(exec, p, d);
      else
        extras ? forward_device<ExecSpace, T, 128, true>(exec, p, d)
               : forward_device<ExecSpace, T, 128, false>(exec, p, d);
      return;
    }
  }
  using Kernel = ForwardKernel<ExecSpace, T>;
  Kernel kern;
  fill_forward_io<T>(kern, p, d);
  kern.Hp = round_up(d.H, Kernel::NR);
  kern.Hvp = round_up(d.Hv, Kernel::NR);
  kern.n_qblocks = blocks(d.T, Kernel::Br);
  const Index league = d.B * d.N * kern.n_qblocks;
  check_league(league, "KokkosAttn::portable::forward");
  const std::size_t bytes = Kernel::scratch_size(static_cast<int>(d.H), kern.Hp, kern.Hvp);
  if constexpr (may_pack_kv<ExecSpace, T>) {
    if (pack_kv_heads(kern.k, kern.v, d)) {
      // Slices of (batch, KV head) pairs: each slice's K and V rows are copied into one reused
      // buffer of at most pack_bytes (one pair at least), then that slice's teams run. Teams are
      // numbered batch, head, query block (slowest to fastest), so a slice is a range of them.
      using Mem = typename ExecSpace::memory_space;
      const Index pairs = d.B * d.K, S = d.S, H = d.H, Hv = d.Hv;
      const Index per = Kokkos::clamp(
          static_cast<Index>(pack_bytes / (static_cast<std::size_t>(S * (H + Hv)) * sizeof(T))),
          Index(1), pairs);
      const Index teams_per_pair = league / pairs;
      Kokkos::View<T*, Mem> kp, vp;
      try {
        kp = decltype(kp)(
            Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "KokkosAttn::portable::k_heads"),
            per * S * H);
        vp = decltype(vp)(
            Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "KokkosAttn::portable::v_heads"),
            per * S * Hv);
      } catch (const std::exception& e) {
        throw BackendFailure(std::string("portable: could not allocate the K/V head copy: ") +
                             e.what());
      }
      const Rows<const T> k = kern.k, v = kern.v;
      for (Index p0 = 0; p0 < pairs; p0 += per) {
        const Index np = Kokkos::min(per, pairs - p0);
        copy_heads(exec, k, v, kp.data(), vp.data(), p0, np, d);
        kern.k = Rows<const T>{kp.data(), d.K * S * H, H, S * H, 1, -p0 * S * H};
        kern.v = Rows<const T>{vp.data(), d.K * S * Hv, Hv, S * Hv, 1, -p0 * S * Hv};
        kern.league0 = p0 * teams_per_pair;
        launch("KokkosAttn::portable::forward", exec, kern, np * teams_per_pair, bytes);
        exec.fence("KokkosAttn::portable::forward: slice done"); // before the copy is reused
      }
      exec.fence("KokkosAttn::portable::forward: done");
      return;
    }
  }
  // Nothing of ours to free: the forward stays enqueued on `exec` (no fence), as the front end
  // promises (KokkosAttn_Sdpa.hpp).
  launch("KokkosAttn::portable::forward", exec, kern, league, bytes);
}

// The device backward (portable_device_backward_kernel.hpp): the device forward in prep mode
// (LSE and D into lse / delta; f32 with the caller's LSE: those and its out instead), then dk,
// dv and dq. Every league is checked before the first
// launch; nothing waits (backward_typed fences).
template <class ExecSpace, class T, int HD>
void backward_device(const ExecSpace& exec, const BackwardProblem& bp, const Dims& d,
                     typename DeviceBackwardBase<ExecSpace, T, HD>::Acc* lse,
                     typename DeviceBackwardBase<ExecSpace, T, HD>::Acc* delta) {
  using Dq = DeviceDqKernel<ExecSpace, T, HD>;
  using Dkdv = DeviceDkdvKernel<ExecSpace, T, HD>;
  const ForwardProblem& p = bp.forward;
  const Common c = make_common(p, d);
  const Index prep_league =
      d.B * d.N * blocks(d.T, DeviceForwardKernel<ExecSpace, T, 64, false>::Br);
  const Index kv_league = d.B * d.K * blocks(d.S, Dkdv::Bk);
  const Index dq_league = d.B * d.N * blocks(d.T, Dq::Br);
  check_league(prep_league, "KokkosAttn::portable::backward_prep_device");
  check_league(blocks(d.B * d.N * d.T, DeviceRowStatsKernel<ExecSpace, T>::kRows),
               "KokkosAttn::portable::backward_row_stats_device");
  check_league(kv_league, "KokkosAttn::portable::backward_dkdv_device");
  check_league(dq_league, "KokkosAttn::portable::backward_dq_device");

  const auto prep = [&](auto kern) {
    fill_forward_io<T>(kern, p, d); // out is not written in prep mode
    kern.c.lse = nullptr;
    kern.dout = make_rows<const T>(bp.dout, d.packed);
    kern.lse_acc = lse;
    kern.delta = delta;
    kern.n_qblocks = blocks(d.T, decltype(kern)::Br);
    launch_device("KokkosAttn::portable::backward_prep_device", exec, kern, prep_league);
  };
  static_assert(DeviceForwardKernel<ExecSpace, T, 64, false>::Br ==
                DeviceForwardKernel<ExecSpace, T, 128, false>::Br);
  if (std::is_same_v<T, float> && p.extras.lse.defined()) {
    // The caller's forward statistics (portable_device_row_stats.hpp).
    DeviceRowStatsKernel<ExecSpace, T> rs;
    rs.c = c;
    rs.out = make_rows<const T>(p.out, d.packed);
    rs.dout = make_rows<const T>(bp.dout, d.packed);
    rs.lse_acc = lse;
    rs.delta = delta;
    Kokkos::parallel_for("KokkosAttn::portable::backward_row_stats_device",
                         kokkos_common::light_launch(rs.policy(exec, d.B * d.N * d.T)), rs);
  } else if (d.Hv <= 64) {
    prep(DeviceForwardKernel<ExecSpace, T, 64, false>{});
  } else {
    prep(DeviceForwardKernel<ExecSpace, T, 128, false>{});
  }

  const auto fill = [&](auto& kern) {
    kern.c = c;
    kern.q = make_rows<const T>(p.q, d.packed);
    kern.k = make_rows<const T>(p.k, d.packed);
    kern.v = make_rows<const T>(p.v, d.packed);
    kern.dout = make_rows<const T>(bp.dout, d.packed);
    kern.lse_acc = lse;
    kern.delta = delta;
  };
  Dkdv kv;
  fill(kv);
  kv.dk = make_rows<T>(bp.dk, d.packed);
  kv.dv = make_rows<T>(bp.dv, d.packed);
  kv.n_kblocks = blocks(d.S, Dkdv::Bk);
  launch_device("KokkosAttn::portable::backward_dkdv_device", exec, kv, kv_league);
  Dq qk;
  fill(qk);
  qk.dq = make_rows<T>(bp.dq, d.packed);
  qk.n_qblocks = blocks(d.T, Dq::Br);
  launch_device("KokkosAttn::portable::backward_dq_device", exec, qk, dq_league);
}

template <class ExecSpace, class T>
void backward_typed(const ExecSpace& exec, const BackwardProblem& bp, const Dims& d) {
  using Fwd = ForwardKernel<ExecSpace, T>;
  using Dkdv = DkdvKernel<ExecSpace, T>;
  using Dq = DqKernel<ExecSpace, T>;
  using Acc = typename Fwd::Acc;
  using Mem = typename ExecSpace::memory_space;
  const ForwardProblem& p = bp.forward;
  const Common c = make_common(p, d);
  const int Hp = round_up(d.H, Fwd::NR), Hvp = round_up(d.Hv, Fwd::NR);
  const int H = static_cast<int>(d.H), Hv = static_cast<int>(d.Hv);
  const bool softcap = c.softcap > 0;
  const bool want_dbias = bp.dbias.defined();
  const ScoreSide dbias = make_score_side(bp.dbias);
  // Every launch's league checked before the first one writes anything.
  check_league(d.B * d.N * blocks(d.T, Fwd::Br), "KokkosAttn::portable::backward_prep");
  check_league(d.B * d.K * blocks(d.S, Dkdv::Bk), "KokkosAttn::portable::backward_dkdv");
  check_league((want_dbias ? dbias.eb * dbias.en : d.B * d.N) * blocks(d.T, Dq::Bq),
               "KokkosAttn::portable::backward_dq");

  // O(B N T) row statistics, plus the dbias accumulator when a bias gradient is wanted.
  Kokkos::View<Acc*, Mem> lse, delta, dbias_acc;
  try {
    lse = decltype(lse)(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "KokkosAttn::portable::lse"),
        d.B * d.N * d.T);
    delta = decltype(delta)(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "KokkosAttn::portable::delta"),
        d.B * d.N * d.T);
    if (want_dbias)
      dbias_acc = decltype(dbias_acc)(Kokkos::view_alloc(exec, "KokkosAttn::portable::dbias"),
                                      dbias.eb * dbias.en * d.T * d.S);
  } catch (const std::exception& e) {
    throw BackendFailure(std::string("portable: could not allocate backward temporaries: ") +
                         e.what());
  }

  if constexpr (!on_host<ExecSpace> && std::is_same_v<Acc, float>) {
    if (const BackwardChoice choice = choose_backward(true, d, plain_backward(bp, d), true);
        choice.device) {
      if (choice.hd == 64)
        backward_device<ExecSpace, T, 64>(exec, bp, d, lse.data(), delta.data());
      else
        backward_device<ExecSpace, T, 128>(exec, bp, d, lse.data(), delta.data());
      exec.fence("KokkosAttn::portable::backward: done");
      return;
    }
  }

  // 1. LSE and D = rowsum(dout * out), recomputed in accumulation precision: the backward reads
  //    neither extras.lse (f32) nor forward.out (rounded to T), like the reference.
  Fwd prep;
  prep.c = c;
  prep.c.lse = nullptr;
  prep.q = make_rows<const T>(p.q, d.packed);
  prep.k = make_rows<const T>(p.k, d.packed);
  prep.v = make_rows<const T>(p.v, d.packed);
  prep.prep = true;
  prep.dout = make_rows<const T>(bp.dout, d.packed);
  prep.lse_acc = lse.data();
  prep.delta = delta.data();
  prep.Hp = Hp, prep.Hvp = Hvp;
  prep.n_qblocks = blocks(d.T, Fwd::Br);
  launch("KokkosAttn::portable::backward_prep", exec, prep, d.B * d.N * prep.n_qblocks,
         Fwd::scratch_size(H, Hp, Hvp));

  // 2. dk, dv.
  Dkdv kv;
  kv.c = c;
  kv.q = prep.q, kv.k = prep.k, kv.v = prep.v, kv.dout = prep.dout;
  kv.dk = make_rows<T>(bp.dk, d.packed);
  kv.dv = make_rows<T>(bp.dv, d.packed);
  kv.lse_acc = lse.data(), kv.delta = delta.data();
  kv.Hp = Hp, kv.Hvp = Hvp;
  kv.n_kblocks = blocks(d.S, Dkdv::Bk);
  launch("KokkosAttn::portable::backward_dkdv", exec, kv, d.B * d.K * kv.n_kblocks,
         Dkdv::scratch_size(H, Hv, Hp, Hvp, softcap));

  // 3. dq (and dbias).
  Dq qk;
  qk.c = c;
  qk.q = prep.q, qk.k = prep.k, qk.v = prep.v, qk.dout = prep.dout;
  qk.dq = make_rows<T>(bp.dq, d.packed);
  qk.lse_acc = lse.data(), qk.delta = delta.data();
  qk.dbias = want_dbias ? dbias_acc.data() : nullptr;
  qk.gb_count = want_dbias ? dbias.eb : d.B;
  qk.gn_count = want_dbias ? dbias.en : d.N;
  qk.Hp = Hp, qk.Hvp = Hvp;
  qk.n_qblocks = blocks(d.T, Dq::Bq);
  launch("KokkosAttn::portable::backward_dq", exec, qk, qk.gb_count * qk.gn_count * qk.n_qblocks,
         Dq::scratch_size(H, Hv, Hp, Hvp, softcap, want_dbias));

  // 4. dbias: the accumulator rounded once into the caller's dtype and strides.
  if (want_dbias) {
    using Policy4 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>, Kokkos::IndexType<Index>>;
    const auto acc = dbias_acc;
    const Index T_ = d.T, S_ = d.S, en = dbias.en;
    Kokkos::parallel_for(
        "KokkosAttn::portable::dbias_store",
        kokkos_common::light_launch(Policy4(exec, {0, 0, 0, 0}, {dbias.eb, dbias.en, d.T, d.S})),
        KOKKOS_LAMBDA(const Index gb, const Index gn, const Index i, const Index j) {
          store_as<Acc>(dbias.data, dbias.dtype, dbias.at(gb, gn, i, j),
                        acc(((gb * en + gn) * T_ + i) * S_ + j));
        });
  }

  // 5. dsinks (rule sinks): -sum over the rows of head n of exp(sink - lse) D, one thread per
  //    head summing its rows in order (bitwise repeatable; O(B T) per head). Keyless rows have
  //    lse = sink and D = 0; a -inf sink is no sink, its gradient 0 (exp(sink - lse) would be
  //    NaN on keyless rows, whose lse is -inf too: found by the front end's test).
  if (bp.dsinks.defined()) {
    const auto lse_v = lse, delta_v = delta;
    float* out = static_cast<float*>(bp.dsinks.data);
    const Index os = bp.dsinks.stride[0];
    Kokkos::parallel_for(
        "KokkosAttn::portable::dsinks", Kokkos::RangePolicy<ExecSpace>(exec, 0, d.N),
        KOKKOS_LAMBDA(const Index n) {
          const Acc s = static_cast<Acc>(c.sinks[n * c.sinks_s]);
          Acc sum = 0;
          const bool no_sink = s == -Kokkos::Experimental::infinity_v<Acc>;
          for (Index b = 0; b < (no_sink ? Index(0) : c.B); ++b) {
            const Index len = c.seq(b).q_len;
            for (Index i = 0; i < len; ++i) {
              const Index at = (b * c.N + n) * c.T + i;
              sum -= Kokkos::exp(s - lse_v(at)) * delta_v(at);
            }
          }
          out[n * os] = static_cast<float>(sum);
        });
  }
  exec.fence("KokkosAttn::portable::backward: done");
}

} // namespace detail

template <class ExecSpace>
void forward_on(const ExecSpace& exec, const ForwardProblem& p, const Dims& d) {
  using namespace KokkosAttn::Impl;
  switch (p.q.dtype) {
  case DType::f64:
    detail::forward_typed<ExecSpace, double>(exec, p, d);
    return;
  case DType::f32:
    detail::forward_typed<ExecSpace, float>(exec, p, d);
    return;
  case DType::f16:
    detail::forward_typed<ExecSpace, f16_storage>(exec, p, d);
    return;
  case DType::bf16:
    detail::forward_typed<ExecSpace, bf16_storage>(exec, p, d);
    return;
  default:
    break;
  }
  throw Unsupported("portable: dtype " + std::string(to_string(p.q.dtype)) +
                    " not supported (expected f64, f32, f16 or bf16)");
}

template <class ExecSpace>
void backward_on(const ExecSpace& exec, const BackwardProblem& p, const Dims& d) {
  using namespace KokkosAttn::Impl;
  switch (p.forward.q.dtype) {
  case DType::f64:
    detail::backward_typed<ExecSpace, double>(exec, p, d);
    return;
  case DType::f32:
    detail::backward_typed<ExecSpace, float>(exec, p, d);
    return;
  case DType::f16:
    detail::backward_typed<ExecSpace, f16_storage>(exec, p, d);
    return;
  case DType::bf16:
    detail::backward_typed<ExecSpace, bf16_storage>(exec, p, d);
    return;
  default:
    break;
  }
  throw Unsupported("portable: dtype " + std::string(to_string(p.forward.q.dtype)) +
                    " not supported (expected f64, f32, f16 or bf16)");
}

} // namespace kattn::portable
