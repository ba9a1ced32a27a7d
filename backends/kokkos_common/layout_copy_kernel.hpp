// The kernels behind copy_tensor (layout_copy.hpp), on raw elements of 1, 2, 4 or 8 bytes: the
// copy moves bits and never converts. Tensors are taken as rank 4 (missing leading dimensions of
// extent 1).
//
// Where the two tensors' fastest dimensions differ (LayoutLeft <-> LayoutRight), the copy is a
// transpose between an A axis along the source's contiguous memory and a B axis along the
// destination's; each axis merges the dimensions that continue its tensor's contiguous run
// (LayoutLeft [B, T, N, H] with B = 2 is contiguous over (b, t) together: A = {B, T}), and the
// other ("outer") dimensions are fixed per block or tile. For 2- and 4-byte elements with whole
// 16-byte vectors a thread transposes 8 x 8 (4 x 4) blocks in registers and a team stores them
// through scratch (StagedBlockCopy); otherwise a team moves 64 x 64 tiles (32 x 32 for 8-byte
// elements) through scratch, element by element, with per-team offset tables (TileCopy).
// docs/performance.md, "Layout copies", and docs/performance-history.md have the versions and
// their bandwidth on the H200. Where both fastest dimensions agree, a team per coordinate of the
// other dimensions walks that dimension with its threads.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>

#include "kokkos_common/light_launch.hpp"

namespace kattn::kokkos_common::detail {

using Index = std::int64_t;

// Plain arrays: the kernels index them on the device.
template <class T>
struct CopyArgs {
  const T* src;
  T* dst;
  Index extent[4], src_stride[4], dst_stride[4];
};

// The dimension of extent > 1 with the smallest stride (3 when every extent is 1).
inline int fastest(const Index* extent, const Index* stride) {
  int f = -1;
  Index best = std::numeric_limits<Index>::max();
  for (int d = 0; d < 4; ++d)
    if (extent[d] > 1 && stride[d] < best)
      best = stride[d], f = d;
  return f < 0 ? 3 : f;
}

// Up to four dimensions merged into one axis, fastest first, and the tile coordinate -> offset
// map in both tensors.
struct Axis {
  int n = 0;
  int dim[4] = {0, 0, 0, 0};
  Index length = 1;

  // `narrow`: every index and extent of this copy fits 32 bits, and so do these divisions.
  KOKKOS_INLINE_FUNCTION void offsets(Index m, const Index* extent, const Index* s1,
                                      const Index* s2, Index& o1, Index& o2,
                                      bool narrow = false) const {
    Index r1 = 0, r2 = 0; // in registers: o1, o2 may be team scratch
    auto u = static_cast<std::uint32_t>(m);
    for (int i = 0; i < n; ++i) {
      const int d = dim[i];
      Index c;
      if (narrow) {
        const auto e = static_cast<std::uint32_t>(extent[d]);
        c = u % e;
        u /= e;
      } else {
        c = m % extent[d];
        m /= extent[d];
      }
      r1 += c * s1[d];
      r2 += c * s2[d];
    }
    o1 = r1;
    o2 = r2;
  }
};

// From dimension `first`, the dimensions that continue a contiguous run in `stride` (the next
// one's stride is this one's extent times its stride), not in `taken`, while the axis is shorter
// than `enough`. Bits of `taken` are set for the chosen ones.
inline Axis contiguous_axis(const Index* extent, const Index* stride, int first, unsigned& taken,
                            Index enough) {
  Axis a;
  int d = first;
  while (d >= 0) {
    a.dim[a.n++] = d;
    a.length *= extent[d];
    taken |= 1u << d;
    const Index next = extent[d] * stride[d];
    d = -1;
    if (a.length >= enough)
      break;
    for (int e = 0; e < 4; ++e)
      if (!(taken & (1u << e)) && extent[e] > 1 && stride[e] == next)
        d = e;
  }
  return a;
}

template <class ExecSpace, class T>
struct TileCopy {
  // 64 x 64 tiles; 32 x 32 for 8-byte elements, whose 64-tile (35 KB) exceeds the 32 KB of team
  // scratch some host spaces give.
  static constexpr int tile = sizeof(T) <= 4 ? 64 : 32;
  static constexpr int pitch = tile + 1; // odd pitch: column reads hit distinct banks
  // Elements a thread loads before it stores any: independent loads in flight. With one (the
  // first version's loop) each thread waited a full memory latency per element: 0.7 TB/s on the
  // H200. A team of `threads` covers the tile in one pass of `per_thread` each.
  static constexpr int threads = 512;
  static constexpr int per_thread = tile * tile / threads;
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Elems = Kokkos::View<T*, typename ExecSpace::scratch_memory_space,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Offs = Kokkos::View<Index*, typename ExecSpace::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  CopyArgs<T> a;
  Axis A, B, outer; // outer: the dimensions fixed per team
  Index tiles_a, tiles_b, per_team, league0;
  bool narrow; // every index and extent fits 32 bits

  static std::size_t scratch_bytes() {
    return Elems::shmem_size(tile * pitch) + Offs::shmem_size(4 * tile);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    Elems buf(m.team_scratch(0), tile * pitch);
    Offs offs(m.team_scratch(0), 4 * tile);
    Index* const a_src = offs.data();
    Index* const a_dst = a_src + tile;
    Index* const b_src = a_dst + tile;
    Index* const b_dst = b_src + tile;
    const int tid = m.team_rank(), nt = m.team_size();
    // Every thread finds its team's tile itself (no serial section before the first barrier).
    Index t = league0 + m.league_rank(), ta, tb;
    if (narrow) {
      auto u = static_cast<std::uint32_t>(t);
      const auto na_ = static_cast<std::uint32_t>(tiles_a),
                 nb_ = static_cast<std::uint32_t>(tiles_b);
      ta = u % na_, u /= na_, tb = u % nb_, t = u / nb_;
    } else {
      ta = t % tiles_a, t /= tiles_a, tb = t % tiles_b, t /= tiles_b;
    }
    const Index a0 = ta * tile, b0 = tb * tile;
    const int na = static_cast<int>(Kokkos::min(Index(tile), A.length - a0));
    const int nb = static_cast<int>(Kokkos::min(Index(tile), B.length - b0));
    for (int i = tid; i < 2 * tile; i += nt) {
      if (i < tile && i < na)
        A.offsets(a0 + i, a.extent, a.src_stride, a.dst_stride, a_src[i], a_dst[i], narrow);
      else if (i >= tile && i - tile < nb)
        B.offsets(b0 + i - tile, a.extent, a.src_stride, a.dst_stride, b_src[i - tile],
                  b_dst[i - tile], narrow);
    }
    m.team_barrier();
    // The same tile at `per_team` coordinates of the outer dimensions: the offset tables serve
    // them all.
    const Index oc_end = Kokkos::min((t + 1) * per_team, outer.length);
    for (Index oc = t * per_team; oc < oc_end; ++oc) {
      Index s0 = 0, d0 = 0;
      outer.offsets(oc, a.extent, a.src_stride, a.dst_stride, s0, d0, narrow);
      // Full tiles (all but the edges) on a team of `threads` without per-element conditions,
      // so that the compiler issues a thread's loads together (with a predicate each it kept
      // four in flight); edge tiles and host teams (one thread) take the guarded path.
      const Copy c{a.src + s0, a.dst + d0, a_src, a_dst, b_src, b_dst, buf, tid, nt, na, nb};
      if (na == tile && nb == tile && nt == threads)
        c.template move<true>(m);
      else
        c.template move<false>(m);
      m.team_barrier(); // before the next coordinate overwrites the tile
    }
  }

  // A tile's two passes through scratch.
  struct Copy {
    const T* src;
    T* dst;
    const Index *a_src, *a_dst, *b_src, *b_dst;
    Elems buf;
    int tid, nt, na, nb;

    KOKKOS_INLINE_FUNCTION bool in(int e, int i, int j) const {
      return e < tile * tile && i < na && j < nb;
    }

    template <bool Full>
    KOKKOS_INLINE_FUNCTION void move(const Member& m) const {
      constexpr int n = tile * tile;
      const int nthreads = Full ? threads : nt; // a constant: every e below is then < n
      // Read: consecutive threads take consecutive A coordinates (the source's contiguous run).
      for (int base = tid; base < n; base += nthreads * per_thread) {
        T v[per_thread] = {}; // (g++ cannot see that each v[r] read was written)
        for (int r = 0; r < per_thread; ++r) {
          const int e = base + r * nthreads, i = e % tile, j = e / tile;
          if (Full || in(e, i, j))
            v[r] = src[a_src[i] + b_src[j]];
        }
        for (int r = 0; r < per_thread; ++r) {
          const int e = base + r * nthreads, i = e % tile, j = e / tile;
          if (Full || in(e, i, j))
            buf(j * pitch + i) = v[r];
        }
      }
      m.team_barrier();
      // Write: consecutive threads take consecutive B coordinates (the destination's).
      for (int base = tid; base < n; base += nthreads * per_thread) {
        T v[per_thread] = {}; // (g++ cannot see that each v[r] read was written)
        for (int r = 0; r < per_thread; ++r) {
          const int e = base + r * nthreads, j = e % tile, i = e / tile;
          if (Full || in(e, i, j))
            v[r] = buf(j * pitch + i);
        }
        for (int r = 0; r < per_thread; ++r) {
          const int e = base + r * nthreads, j = e % tile, i = e / tile;
          if (Full || in(e, i, j))
            dst[a_dst[i] + b_dst[j]] = v[r];
        }
      }
    }
  };
};

// The transpose with 16-byte accesses on both sides, for 2- and 4-byte elements (W = 8 or 4 to a
// 16-byte vector) where vector_ok holds. A team takes a tile of `lanes` blocks of W x W,
// `lanes_b` blocks along B (B's length in blocks rounded up to a power of two, at most 16) by
// lanes / lanes_b along A: each thread loads a block as W vectors along A (a warp's loads are runs
// of 256 bytes or more), transposes it in registers and puts W vectors along B into scratch;
// after a barrier the team stores the tile row by row along B, consecutive threads on consecutive
// vectors, so that a warp's stores are whole 128-byte lines. Storing each block straight from
// registers (16 rows of 32 bytes per warp instruction, the kernel before this one) wrote 4x the
// L2 sectors and ran 3.3x slower on the H200 (cuda/tools/layout_copy_probe.cu,
// docs/performance.md "Layout copies").
template <class ExecSpace, class T>
struct StagedBlockCopy {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "16-bit and 32-bit elements only");
  static constexpr int W = 16 / static_cast<int>(sizeof(T)), bits = 8 * static_cast<int>(sizeof(T));
  static constexpr int lanes = 256; // blocks per tile: the team's threads on a device
  // Host spaces give 32 KB of level-0 scratch, the 2-byte tile's size: level 1 there.
  static constexpr int level =
      Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible ? 1 : 0;
  struct alignas(16) Vec {
    std::uint64_t lo, hi;
  };
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Tile = Kokkos::View<Vec*, typename ExecSpace::scratch_memory_space,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  CopyArgs<T> a;
  Axis A, B, outer;
  Index tiles_a, tiles_b; // tiles per outer coordinate, along A and along B
  int lanes_b;
  Index league0;
  bool narrow;

  static std::size_t scratch_bytes() { return Tile::shmem_size(lanes * W); }

  // 16-byte global accesses: one vector load or store on the device (the pointers are 16-byte
  // aligned: vector_ok), memcpy on the host (no aliasing of T through another type).
  KOKKOS_INLINE_FUNCTION static Vec load(const T* p) {
    Vec x;
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    const ulonglong2 u = *reinterpret_cast<const ulonglong2*>(p);
    x.lo = u.x;
    x.hi = u.y;
#else
    __builtin_memcpy(&x, p, 16);
#endif
    return x;
  }
  KOKKOS_INLINE_FUNCTION static void store(T* p, const Vec& x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    *reinterpret_cast<ulonglong2*>(p) = make_ulonglong2(x.lo, x.hi);
#else
    __builtin_memcpy(p, &x, 16);
#endif
  }
  // Element r of a vector (lowest address first: little-endian).
  KOKKOS_INLINE_FUNCTION static std::uint64_t element(const Vec& x, int r) {
    constexpr std::uint64_t mask = (std::uint64_t(1) << bits) - 1;
    return ((r < W / 2 ? x.lo : x.hi) >> (bits * (r % (W / 2)))) & mask;
  }
  // Where vector c of tile row `row` sits in scratch: rotated by the row's block along A, so that
  // a warp's scratch stores spread over the banks.
  KOKKOS_INLINE_FUNCTION int slot(int row, int c) const {
    return row * lanes_b + (c ^ ((row / W) & (lanes_b - 1)));
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    Tile tile(m.team_scratch(int{level}), lanes * W); // (a copy: team_scratch takes a reference)
    const int lanes_a = lanes / lanes_b, tid = m.team_rank(), nt = m.team_size();
    Index u = league0 + m.league_rank(), ta, tb, oc;
    if (narrow) {
      auto v = static_cast<std::uint32_t>(u);
      const auto na_ = static_cast<std::uint32_t>(tiles_a),
                 nb_ = static_cast<std::uint32_t>(tiles_b);
      ta = v % na_, v /= na_, tb = v % nb_, oc = v / nb_;
    } else {
      ta = u % tiles_a, u /= tiles_a, tb = u % tiles_b, oc = u / tiles_b;
    }
    Index s0 = 0, d0 = 0, unused = 0;
    outer.offsets(oc, a.extent, a.src_stride, a.dst_stride, s0, d0, narrow);
    const Index blocks_a = A.length / W, blocks_b = B.length / W;
    const Index a0 = ta * lanes_a, b0 = tb * lanes_b; // the tile's first blocks
    // Loads: lanes along A first (the source's contiguous run). A is linear with stride 1 in the
    // source, B in the destination (vector_ok).
    for (int v = tid; v < lanes; v += nt) {
      const int la = v % lanes_a, lb = v / lanes_a;
      const Index ab = a0 + la, bb = b0 + lb;
      if (ab >= blocks_a || bb >= blocks_b)
        continue;
      const T* const src = a.src + s0 + ab * W;
      Vec x[W];
      for (int j = 0; j < W; ++j) {
        Index bs = 0;
        B.offsets(bb * W + j, a.extent, a.src_stride, a.dst_stride, bs, unused, narrow);
        x[j] = load(src + bs);
      }
      for (int r = 0; r < W; ++r) {
        Vec y{0, 0};
        for (int j = 0; j < W / 2; ++j) {
          y.lo |= element(x[j], r) << (bits * j);
          y.hi |= element(x[j + W / 2], r) << (bits * j);
        }
        tile(slot(la * W + r, lb)) = y;
      }
    }
    m.team_barrier();
    // Stores: consecutive threads on consecutive vectors of a tile row (the destination's run).
    for (int i = tid; i < lanes * W; i += nt) {
      const int row = i / lanes_b, c = i % lanes_b;
      const Index ar = a0 * W + row, bc = b0 + c;
      if (ar >= A.length || bc >= blocks_b)
        continue;
      Index ad = 0;
      A.offsets(ar, a.extent, a.src_stride, a.dst_stride, unused, ad, narrow);
      store(a.dst + d0 + ad + bc * W, tile(slot(row, c)));
    }
  }
};

// Whether StagedBlockCopy serves a copy: whole blocks on both axes, each axis linear with
// stride 1 in its tensor, and every 16-byte vector aligned (both pointers, and every stride
// outside an axis a multiple of the vector's elements).
template <class T>
bool vector_ok(const CopyArgs<T>& a, const Axis& A, const Axis& B) {
  if constexpr (sizeof(T) != 2 && sizeof(T) != 4) {
    return false;
  } else {
    constexpr int W = 16 / static_cast<int>(sizeof(T));
    if (A.length % W || B.length % W || a.src_stride[A.dim[0]] != 1 ||
        a.dst_stride[B.dim[0]] != 1 || reinterpret_cast<std::uintptr_t>(a.src) % 16 ||
        reinterpret_cast<std::uintptr_t>(a.dst) % 16)
      return false;
    const auto in = [](const Axis& x, int d) {
      for (int i = 0; i < x.n; ++i)
        if (x.dim[i] == d)
          return true;
      return false;
    };
    for (int d = 0; d < 4; ++d) {
      if (a.extent[d] <= 1)
        continue;
      if ((!in(A, d) && a.src_stride[d] % W) || (!in(B, d) && a.dst_stride[d] % W))
        return false;
    }
    return true;
  }
}

// Both tensors contiguous along dimension `f`: a team per coordinate of the other dimensions.
template <class ExecSpace, class T>
struct RowCopy {
  using Member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  CopyArgs<T> a;
  int f;
  Axis outer;
  Index league0;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    Index s0 = 0, d0 = 0;
    outer.offsets(league0 + m.league_rank(), a.extent, a.src_stride, a.dst_stride, s0, d0);
    const Index ss = a.src_stride[f], ds = a.dst_stride[f];
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, a.extent[f]),
                         [&](const Index i) { a.dst[d0 + i * ds] = a.src[s0 + i * ss]; });
  }
};

// The dimensions not in `taken`, as one axis (the teams' coordinates).
inline Axis outer_axis(const Index* extent, unsigned taken) {
  Axis o;
  for (int d = 0; d < 4; ++d)
    if (!(taken & (1u << d)) && extent[d] > 1) // extent 1: nothing to decompose
      o.dim[o.n++] = d, o.length *= extent[d];
  return o;
}

template <class Policy, class ExecSpace, class Kernel, class SetScratch>
void launch_chunks(const ExecSpace& exec, const char* name, Kernel k, Index league, int threads,
                   const SetScratch& scratch) {
  constexpr bool on_host = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
  constexpr Index chunk = Index(1) << 30; // Kokkos league sizes are int
  for (k.league0 = 0; k.league0 < league; k.league0 += chunk) {
    const int teams = static_cast<int>(Kokkos::min(chunk, league - k.league0));
    auto policy = light_launch(Policy(exec, teams, on_host ? 1 : threads));
    scratch(policy);
    Kokkos::parallel_for(name, policy, k);
  }
}

template <class ExecSpace, class T>
void copy_elements(const ExecSpace& exec, const CopyArgs<T>& a) {
  if (a.extent[0] * a.extent[1] * a.extent[2] * a.extent[3] == 0)
    return;
  const int fa = fastest(a.extent, a.src_stride), fb = fastest(a.extent, a.dst_stride);
  if (fa == fb) {
    RowCopy<ExecSpace, T> k{a, fa, outer_axis(a.extent, 1u << fa), 0};
    const int threads = a.extent[fa] >= 128 ? 128 : 32;
    launch_chunks<Kokkos::TeamPolicy<ExecSpace>>(exec, "KokkosAttn::layout_copy", k, k.outer.length,
                                                 threads, [](auto&) {});
    return;
  }
  using Kernel = TileCopy<ExecSpace, T>;
  unsigned taken = 0;
  // B first takes its fastest dimension, so that A's run stops before it.
  taken |= 1u << fb;
  Axis A = contiguous_axis(a.extent, a.src_stride, fa, taken, Kernel::tile);
  taken &= ~(1u << fb);
  Axis B = contiguous_axis(a.extent, a.dst_stride, fb, taken, Kernel::tile);
  Kernel k{a, A, B, outer_axis(a.extent, taken), 0, 0, 1, 0, false};
  k.tiles_a = (A.length + Kernel::tile - 1) / Kernel::tile;
  k.tiles_b = (B.length + Kernel::tile - 1) / Kernel::tile;
  // Coordinates of the outer dimensions per team: enough teams for about two waves of the
  // space's concurrency, the rest of the work looped inside a team (its setup paid once).
  const Index tiles = k.tiles_a * k.tiles_b * k.outer.length;
  const Index slots = Kokkos::max(Index(1), Index(exec.concurrency()) / Kernel::threads);
  k.per_team = Kokkos::clamp((tiles + 2 * slots - 1) / (2 * slots), Index(1), Index(16));
  const Index league = k.tiles_a * k.tiles_b * ((k.outer.length + k.per_team - 1) / k.per_team);
  constexpr Index narrow_max = Index(1) << 31;
  k.narrow = league < narrow_max && A.length < narrow_max && B.length < narrow_max &&
             k.outer.length < narrow_max;
  if constexpr (sizeof(T) == 2 || sizeof(T) == 4) {
    if (vector_ok(a, A, B)) {
      using Sk = StagedBlockCopy<ExecSpace, T>;
      int lanes_b = 1;
      while (lanes_b < 16 && lanes_b * Sk::W < B.length)
        lanes_b *= 2;
      const Index tile_a = Index(Sk::lanes / lanes_b) * Sk::W, tile_b = Index(lanes_b) * Sk::W;
      Sk sk{a,
            A,
            B,
            k.outer,
            (A.length + tile_a - 1) / tile_a,
            (B.length + tile_b - 1) / tile_b,
            lanes_b,
            0,
            false};
      const Index staged = sk.tiles_a * sk.tiles_b * sk.outer.length;
      sk.narrow = staged < narrow_max && k.narrow;
      launch_chunks<Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Sk::lanes>>>(
          exec, "KokkosAttn::layout_copy_staged16", sk, staged, Sk::lanes, [](auto& policy) {
            policy.set_scratch_size(Sk::level, Kokkos::PerTeam(Sk::scratch_bytes()));
          });
      return;
    }
  }
  // Two teams of 512 per multiprocessor, 64 registers a thread, no spills. Three (40 registers,
  // 32-72 bytes of stack) measured the same on the H200 (docs/performance-history.md).
  const auto scratch = [](auto& policy) {
    policy.set_scratch_size(0, Kokkos::PerTeam(Kernel::scratch_bytes()));
  };
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<Kernel::threads, 2>>;
  launch_chunks<Policy>(exec, "KokkosAttn::layout_copy_transpose", k, league, Kernel::threads,
                        scratch);
}

} // namespace kattn::kokkos_common::detail
