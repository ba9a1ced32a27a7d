// Building blocks of the portable kernels: tile sizes, team-scratch carving, the register-blocked
// tile product every matrix multiply of the forward and backward goes through, and a
// vectorisable exp for the softmax.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

#include "kokkos_common/kokkos_scalar.hpp"
#include "kokkos_common/unroll.hpp"
#include "kokkosattn/dtype.hpp"

namespace kattn::portable {

// Tile shapes per accumulation type. MR x NR is one thread's register block of a tile product;
// NR spans two SIMD registers of the host ISA (the same values are fine on GPUs, where a thread
// owns one block). Row/key tiles are multiples of both so no product needs a remainder loop.
template <class Acc>
struct Tiles;

template <>
struct Tiles<float> {
  static constexpr int MR = 4;
#if defined(__AVX__)
  static constexpr int NR = 16;
#else
  static constexpr int NR = 8;
#endif
  static constexpr int Br = 64; // query rows per team (forward)
  static constexpr int Bc = 64; // keys per tile
};

template <>
struct Tiles<double> {
  static constexpr int MR = 4;
#if defined(__AVX__)
  static constexpr int NR = 8;
#else
  static constexpr int NR = 4;
#endif
  static constexpr int Br = 32;
  static constexpr int Bc = 32;
};

// Whether a space runs kernels on the host, where a team is one thread (portable_run_impl.hpp).
template <class ExecSpace>
inline constexpr bool host_space =
    Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

// The forward's tiles: Tiles<Acc>, except fp32 on AVX hosts, where a 6 x 16 register block
// (12 of the 16 ymm registers accumulate: enough independent FMA chains to cover the FMA
// latency on both pipes, which the 4 x 16 block's 8 do not) runs on 96 x 96 tiles (multiples of
// 6, 8 and 16). Measured single-thread on Zen 3 over one head's K/V tiles: 76-82 GFLOP/s for
// both products against 50-65 with 4 x 16 on 64 x 64 tiles (one core's FMA peak: ~97).
template <class Acc, bool Host>
struct ForwardTiles : Tiles<Acc> {};

#if defined(__AVX__)
template <>
struct ForwardTiles<float, true> {
  static constexpr int MR = 6;
  static constexpr int NR = 16;
  static constexpr int Br = 96;
  static constexpr int Bc = 96;
};
#endif

KOKKOS_INLINE_FUNCTION constexpr int round_up(std::int64_t x, int m) {
  return static_cast<int>((x + m - 1) / m * m);
}

// Carves aligned arrays out of a team's scratch. The host computes the total with the same
// sequence of take() calls on a null carver (see Carver::bytes).
template <class Team>
class Carver {
public:
  static constexpr std::size_t align = 64;

  KOKKOS_INLINE_FUNCTION Carver(const Team& team, int level) : team_(&team), level_(level) {}

  template <class T>
  KOKKOS_INLINE_FUNCTION T* take(std::int64_t count) const {
    return static_cast<T*>(team_->team_scratch(level_).get_shmem_aligned(
        static_cast<std::ptrdiff_t>(count) * static_cast<std::ptrdiff_t>(sizeof(T)),
        static_cast<std::ptrdiff_t>(align)));
  }

private:
  const Team* team_;
  int level_;
};

// Bytes for `count` elements of T plus the worst-case alignment padding.
template <class T>
constexpr std::size_t scratch_bytes(std::int64_t count) {
  return static_cast<std::size_t>(count) * sizeof(T) + 64;
}

// C[M x N] (+)= A[M x Kd] * B[Kd x N] on scratch tiles. A(m, k) = A[m * a_m + k * a_k] (either
// orientation, so transposed operands need no copy), B row-major with leading dim ldb, C with
// ldc. M is a multiple of MR and N of NR. Each thread of the team owns MR x NR blocks and keeps
// them in registers across the whole k loop; the NR loop is the one the compiler vectorises.
// With c_scale, accumulation starts from C's row m times c_scale[m] (the online softmax's
// rescale of the output accumulator, folded into the load the product does anyway).
template <int MR, int NR, class Team, class Acc>
KOKKOS_INLINE_FUNCTION void tile_gemm(const Team& team, int M, int N, int Kd, const Acc* A, int a_m,
                                      int a_k, const Acc* B, int ldb, Acc* C, int ldc,
                                      bool accumulate, const Acc* c_scale = nullptr) {
  const int nt = N / NR;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (M / MR) * nt), [&](const int t) {
    const int m0 = (t / nt) * MR;
    const int n0 = (t % nt) * NR;
    Acc acc[MR][NR];
    KATTN_UNROLL
    for (int r = 0; r < MR; ++r) {
      const Acc cs = c_scale ? c_scale[m0 + r] : Acc(1);
      KATTN_UNROLL
      for (int c = 0; c < NR; ++c)
        acc[r][c] = accumulate ? C[(m0 + r) * ldc + n0 + c] * cs : Acc(0);
    }
    const Acc* a = A + m0 * a_m;
    const Acc* b = B + n0;
    for (int k = 0; k < Kd; ++k) {
      const Acc* bk = b + k * ldb;
      const Acc* ak = a + k * a_k;
      KATTN_UNROLL
      for (int r = 0; r < MR; ++r) {
        const Acc ar = ak[r * a_m];
        KATTN_UNROLL
        for (int c = 0; c < NR; ++c)
          acc[r][c] += ar * bk[c];
      }
    }
    KATTN_UNROLL
    for (int r = 0; r < MR; ++r) {
      KATTN_UNROLL
      for (int c = 0; c < NR; ++c)
        C[(m0 + r) * ldc + n0 + c] = acc[r][c];
    }
  });
}

// exp(x) for x <= 0 (softmax arguments after the running max is subtracted), -inf included;
// a NaN stays NaN (a NaN score makes its row NaN, docs/semantics.md non_finite).
// float: Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, then exp(r) by its Taylor series to
// degree 7 (truncation error < 6e-9, under one ulp), scaled by 2^n through the exponent bits.
// Branch-free so that loops over a tile vectorise. double keeps the library exp.
KOKKOS_FORCEINLINE_FUNCTION float exp_nonpositive(float x) {
  const bool tiny = !(x >= -87.0f);   // exp(-87) ~ 1.6e-38: 0 below (-inf included), and NaN
  const float xc = tiny ? -87.0f : x; // a NaN must not reach the integer conversion below
  // Round to nearest by adding and removing 1.5 * 2^23 (no libm call, so it vectorises).
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693145751953125f; // ln2 high part (exact product for |n| < 2^11)
  r = r - n * 1.42860682030941723e-06f;  // ln2 low part
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const std::int32_t e = (static_cast<std::int32_t>(n) + 127) << 23;
  const float scale = Kokkos::bit_cast<float>(e);
  return tiny ? (x == x ? 0.0f : x) : p * scale; // a NaN argument stays NaN
}

KOKKOS_FORCEINLINE_FUNCTION double exp_nonpositive(double x) {
  return Kokkos::exp(x);
}

template <class Acc>
KOKKOS_INLINE_FUNCTION constexpr Acc neg_inf() {
  return -Kokkos::Experimental::infinity_v<Acc>;
}

// Row reductions over a score row of W entries of which [lo, hi) are live. Fixed trip counts
// and L independent partial results let the compiler vectorise them without reassociating
// floating-point sums (it may not on its own).
template <int W, class Acc>
KOKKOS_FORCEINLINE_FUNCTION Acc row_max(const Acc* srow, int lo, int hi) {
  constexpr int L = 8;
  static_assert(W % L == 0, "row width must be a multiple of the partial count");
  Acc part[L];
  KATTN_UNROLL
  for (int u = 0; u < L; ++u)
    part[u] = neg_inf<Acc>();
  for (int c0 = 0; c0 < W; c0 += L) {
    KATTN_UNROLL
    for (int u = 0; u < L; ++u) {
      const int cc = c0 + u;
      const Acc x = (cc >= lo && cc < hi) ? srow[cc] : neg_inf<Acc>();
      part[u] = x > part[u] ? x : part[u];
    }
  }
  Acc m = part[0];
  for (int u = 1; u < L; ++u)
    m = part[u] > m ? part[u] : m;
  return m;
}

// srow[cc] = exp(srow[cc] - m) on [lo, hi), 0 elsewhere; returns the row sum.
template <int W, class Acc>
KOKKOS_FORCEINLINE_FUNCTION Acc exp_row(Acc* srow, int lo, int hi, Acc m) {
  constexpr int L = 8;
  Acc part[L];
  KATTN_UNROLL
  for (int u = 0; u < L; ++u)
    part[u] = 0;
  for (int c0 = 0; c0 < W; c0 += L) {
    KATTN_UNROLL
    for (int u = 0; u < L; ++u) {
      const int cc = c0 + u;
      const Acc p = (cc >= lo && cc < hi) ? exp_nonpositive(srow[cc] - m) : Acc(0);
      srow[cc] = p;
      part[u] += p;
    }
  }
  Acc sum = 0;
  for (int u = 0; u < L; ++u)
    sum += part[u];
  return sum;
}

// dst[h] = mul * src[h * sd] for h < n, widened to Acc; the contiguous case (sd == 1, the
// usual head-dim stride) gets its own loop so that it vectorises.
template <class Traits, class T, class Acc>
KOKKOS_FORCEINLINE_FUNCTION void load_row(Acc* KOKKOS_RESTRICT dst, const T* KOKKOS_RESTRICT src,
                                          std::int64_t sd, int n, Acc mul) {
  if (sd == 1) {
    constexpr int L = 8; // fixed-size chunks: GCC's -O2 only vectorises known trip counts
    int h = 0;
    for (; h + L <= n; h += L) {
      KATTN_UNROLL
      for (int e = 0; e < L; ++e)
        dst[h + e] = static_cast<Acc>(Traits::load(src[h + e])) * mul;
    }
    for (; h < n; ++h)
      dst[h] = static_cast<Acc>(Traits::load(src[h])) * mul;
  } else {
    for (int h = 0; h < n; ++h)
      dst[h] = static_cast<Acc>(Traits::load(src[h * sd])) * mul;
  }
}

// dst[h * sd] = src[h] * mul for h < n, rounded to T; the contiguous case gets its own loop so that
// it vectorises (as load_row).
template <class Traits, class T, class Acc>
KOKKOS_FORCEINLINE_FUNCTION void store_row(T* KOKKOS_RESTRICT dst, std::int64_t sd,
                                           const Acc* KOKKOS_RESTRICT src, int n, Acc mul) {
  if (sd == 1) {
    constexpr int L = 8;
    int h = 0;
    for (; h + L <= n; h += L) {
      KATTN_UNROLL
      for (int e = 0; e < L; ++e)
        dst[h + e] = Traits::store(src[h + e] * mul);
    }
    for (; h < n; ++h)
      dst[h] = Traits::store(src[h] * mul);
  } else {
    for (int h = 0; h < n; ++h)
      dst[h * sd] = Traits::store(src[h] * mul);
  }
}

// Writes `value` to element `offset` of a float tensor of runtime dtype (dbias may have any
// float dtype, independent of q/k/v).
template <class Acc>
KOKKOS_INLINE_FUNCTION void store_as(void* data, DType t, std::int64_t offset, Acc value) {
  using KokkosAttn::Impl::bf16_storage;
  using KokkosAttn::Impl::f16_storage;
  using KokkosAttn::Impl::scalar_traits;
  switch (t) {
  case DType::f64:
    static_cast<double*>(data)[offset] = static_cast<double>(value);
    break;
  case DType::f32:
    static_cast<float*>(data)[offset] = static_cast<float>(value);
    break;
  case DType::f16:
    static_cast<f16_storage*>(data)[offset] =
        scalar_traits<f16_storage>::store(static_cast<float>(value));
    break;
  case DType::bf16:
    static_cast<bf16_storage*>(data)[offset] =
        scalar_traits<bf16_storage>::store(static_cast<float>(value));
    break;
  default:
    break;
  }
}

} // namespace kattn::portable
