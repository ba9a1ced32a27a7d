// The forward's softmax pass over one chunk of 8 query rows, written with GCC/Clang vector
// extensions for host builds. The generic loop in portable_forward_kernel.hpp computes the same
// values, but GCC does not vectorise it (it stays scalar at -O2 and -O3, measured: ~4 ns per
// score on Zen 3), and the softmax then costs more than both tile products together. Here one
// 8-lane vector holds the chunk's 8 rows, so every step is a plain vertical vector operation.
//
// Compiled only by host compilers (never nvcc/hipcc/SYCL) targeting AVX, where the 8 lanes are
// one register (elsewhere GCC would split them and warn that passing them changes the ABI),
// for float accumulation. Other targets keep the generic loop.
#pragma once

#if defined(__GNUC__) && defined(__AVX__) && !defined(__CUDACC__) && !defined(__HIPCC__) &&        \
    !defined(SYCL_LANGUAGE_VERSION)
#define KATTN_PORTABLE_HOST_VECTORS 1

#include <cstdint>
#include <cstring>

namespace kattn::portable::host_vectors {

using f8 = float __attribute__((vector_size(32)));
using i8 = std::int32_t __attribute__((vector_size(32)));

inline f8 load(const float* p) {
  f8 v;
  std::memcpy(&v, p, sizeof v); // unaligned-safe; compiles to one vector load
  return v;
}

inline void store(float* p, f8 v) {
  std::memcpy(p, &v, sizeof v);
}

inline f8 splat(float x) {
  return f8{} + x;
}

// exp(x) for x <= 0 lane by lane: the same Cody-Waite reduction and degree-7 Taylor
// polynomial as the scalar exp_nonpositive in portable_tile.hpp (same operations, same order;
// the compiler may contract them into FMAs differently, so the two agree to about an ulp).
inline f8 exp_nonpositive(f8 x) {
  const i8 tiny = !(x >= -87.0f);
  x = tiny ? splat(-87.0f) : x;
  const f8 n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  f8 r = x - n * 0.693145751953125f;
  r = r - n * 1.42860682030941723e-06f;
  f8 p = splat(1.0f / 5040.0f);
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const i8 e = (__builtin_convertvector(n, i8) + 127) << 23;
  f8 scale;
  std::memcpy(&scale, &e, sizeof scale);
  return tiny ? splat(0.0f) : p * scale;
}

// Rows r0 .. r0+7 of the transposed score tile st[Bc][ld] (st[cc * ld + r]): live keys of row
// u are [lo[u], hi[u]) within the tile. Updates the running max m and sum l of the rows,
// overwrites the scores with P = exp(S - m_new) (0 where not live) and returns, through
// alpha, the factors exp(m_old - m_new) the rows' accumulators must be rescaled by.
inline void softmax_chunk8(float* st, int ld, int r0, int Bc, const int* lo, const int* hi,
                           float* m, float* l, float* alpha) {
  i8 vlo, vhi;
  std::memcpy(&vlo, lo, sizeof vlo);
  std::memcpy(&vhi, hi, sizeof vhi);
  const f8 ninf = splat(-__builtin_inff());
  f8 mx = ninf;
  for (int cc = 0; cc < Bc; ++cc) {
    const i8 live = (vlo <= cc) & (vhi > cc);
    const f8 x = live ? load(st + cc * ld + r0) : ninf;
    mx = x > mx ? x : mx;
  }
  const f8 m_old = load(m + r0);
  const f8 m_new = mx > m_old ? mx : m_old;
  // A row that has seen nothing yet keeps -inf; exp(-inf - 0) = 0 keeps its P zero.
  const f8 base = m_new == ninf ? splat(0.0f) : m_new;
  const f8 a = exp_nonpositive(m_old - base);
  store(m + r0, m_new);
  f8 sum = splat(0.0f);
  for (int cc = 0; cc < Bc; ++cc) {
    float* col = st + cc * ld + r0;
    const i8 live = (vlo <= cc) & (vhi > cc);
    const f8 p = exp_nonpositive((live ? load(col) : ninf) - base);
    store(col, p);
    sum += p;
  }
  store(l + r0, load(l + r0) * a + sum);
  store(alpha, a);
}

} // namespace kattn::portable::host_vectors

#endif
