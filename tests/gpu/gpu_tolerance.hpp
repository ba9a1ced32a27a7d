// What every GPU test's tolerance is built from: the unit roundoff of a 16-bit dtype, rounding
// a double to a dtype (the "naive same precision" baseline of BRIEF.md's rule) and the largest
// finite magnitude of a vector (LSE vectors hold -inf for fully masked rows).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/host_tensor.hpp"

namespace kattn::test {

inline double unit_roundoff(DType t) {
  return t == DType::f16 ? 0x1p-11 : 0x1p-8;
}

inline double round_to(DType t, double x) {
  HostTensor h(t, {1});
  h.set(0, x);
  return h.get(0);
}

inline double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    if (std::isfinite(x))
      m = std::max(m, std::abs(x));
  return m;
}

} // namespace kattn::test
