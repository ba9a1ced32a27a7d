// The score rule of docs/semantics.md applied to one row of a score tile in team scratch:
// which keys of the tile the row sees, and softcap -> + bias + ALiBi -> boolean mask on them.
#pragma once

#include <Kokkos_Core.hpp>

#include "kokkos_common/kokkos_scalar.hpp"
#include "portable/portable_params.hpp"
#include "portable/portable_tile.hpp"

namespace kattn::portable {

// Columns [lo, hi) of the tile starting at key j0 (width `cols`, inside k_len) that valid query
// row i sees under the window rule (MaskRule::window_band of one row); lo == hi when none.
KOKKOS_INLINE_FUNCTION void visible_cols(const MaskRule& rule, Index i, Index j0, int cols, int& lo,
                                         int& hi) {
  const IndexRange<Index> band = rule.window_band(i, j0, 0, cols);
  lo = static_cast<int>(band.lo);
  hi = static_cast<int>(band.hi > band.lo ? band.hi : band.lo);
}

// The score rule after scale * q.k for a key j that query i (batch b, head n) sees, in its
// order: softcap -> + bias + ALiBi -> boolean mask (masked: -inf). slope is the head's ALiBi
// slope (unused without one). When dcap is given it receives softcap's derivative factor
// 1 - tanh^2 (1 without softcap).
template <class Acc>
KOKKOS_INLINE_FUNCTION Acc score_extra(const Common& c, const MaskRule& rule, Acc x, Acc slope,
                                       Index b, Index n, Index i, Index j, Acc* dcap = nullptr) {
  if (c.softcap > 0) {
    const Acc cap = static_cast<Acc>(c.softcap);
    const Acc t = Kokkos::tanh(x / cap);
    x = cap * t;
    if (dcap)
      *dcap = Acc(1) - t * t;
  } else if (dcap) {
    *dcap = Acc(1);
  }
  if (c.bias.data)
    x += KokkosAttn::Impl::load_as<Acc>(c.bias.data, c.bias.dtype, c.bias.at(b, n, i, j));
  if (c.slopes)
    x += static_cast<Acc>(rule.alibi(static_cast<double>(slope), i, j));
  if (c.mask.data && static_cast<const std::uint8_t*>(c.mask.data)[c.mask.at(b, n, i, j)] == 0)
    x = neg_inf<Acc>();
  return x;
}

// srow[cc * stride] for cc in [lo, hi) hold scale * q.k for keys j0 + cc of query i (batch b,
// head n): score_extra on each; dcap[cc] its softcap factor when given.
template <class Acc>
KOKKOS_INLINE_FUNCTION void apply_score_extras(const Common& c, const MaskRule& rule, Acc* srow,
                                               Acc* dcap, int lo, int hi, Index b, Index n, Index i,
                                               Index j0, int stride = 1) {
  const Acc slope = c.slopes ? static_cast<Acc>(c.slope(b, n)) : Acc(0);
  for (int cc = lo; cc < hi; ++cc)
    srow[cc * stride] = score_extra(c, rule, srow[cc * stride], slope, b, n, i, j0 + cc,
                                    dcap ? dcap + cc : nullptr);
}

} // namespace kattn::portable
