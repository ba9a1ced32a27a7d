// What both of naive's GPU softmax kernels do with a row's max and sum (naive_softmax.hpp,
// naive_softmax_held.hpp): the shift of the exponentials and the LSE.
#pragma once

#include <Kokkos_Core.hpp>

#include "naive/naive_params.hpp"

namespace kattn::naive::detail {

// A row without a visible key leaves its max at Kokkos::Max's identity: -inf in Kokkos 5, the
// lowest finite value in Kokkos 4. Such a row is told by its sum, whatever the identity
// (exp(-inf - shift) = 0; a row with a visible key sums to >= 1, its maximum's exp(0)).
template <class Acc>
KOKKOS_INLINE_FUNCTION Acc row_shift(Acc max) {
  return max == -Kokkos::Experimental::infinity_v<Acc> ? Acc(0) : max;
}

// The LSE of row (b, n, i) where asked: -inf for a row without a visible key (sum 0).
template <class Acc>
KOKKOS_INLINE_FUNCTION void store_lse(const Params& a, Index b, Index n, Index i, Acc shift,
                                      Acc sum) {
  float* lse = static_cast<float*>(a.lse.data);
  if (lse)
    lse[b * a.lse.stride[0] + n * a.lse.stride[1] + i * a.lse.stride[2]] =
        sum == 0 ? -Kokkos::Experimental::infinity_v<float>
                 : static_cast<float>(shift + Kokkos::log(sum));
}

} // namespace kattn::naive::detail
