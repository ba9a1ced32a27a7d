// Test helper: which gradients of a varlen or masked problem are 0 by structure, for the GPU
// backward tests of every backend (gpu/backward_case.hpp, test_portable_device_backward.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/reference_problem.hpp"

namespace kattn::test {

// Varlen gradients that are 0 by structure, not by arithmetic: dq rows past q_len (padded) or
// without any visible key, dk/dv rows past k_len (padded). (A gradient can also be 0 in exact
// arithmetic, e.g. dq of a row that sees one key; a kernel's rounding need not reproduce that,
// so only these rows are checked bit for bit.) `s` is the Attn's spec (lengths resolved).
inline bool structural_zeros_exact(const Spec& s, const std::vector<double>& dq,
                                   const std::vector<double>& dk, const std::vector<double>& dv) {
  const bool padded = !s.packed && (!s.q_lens.empty() || !s.k_lens.empty());
  if (!padded && !s.packed)
    return true;
  auto len = [](const std::vector<std::int64_t>& v, std::int64_t b, std::int64_t full) {
    return v.empty() ? full : v[static_cast<std::size_t>(b)];
  };
  const std::int64_t L = s.opt.window_left, R = s.opt.causal ? 0 : s.opt.window_right;
  std::int64_t q0 = 0; // packed: token offset of batch b
  bool ok = true;
  auto row_zero = [&](const std::vector<double>& g, std::int64_t token, std::int64_t heads,
                      std::int64_t dim, std::int64_t b_stride_tokens, std::int64_t b) {
    const std::int64_t first = (b * b_stride_tokens + token) * heads * dim;
    for (std::int64_t e = 0; e < heads * dim; ++e)
      ok = ok && g[static_cast<std::size_t>(first + e)] == 0.0;
  };
  for (std::int64_t b = 0; b < s.B; ++b) {
    const std::int64_t ql = len(s.q_lens, b, s.T), kl = len(s.k_lens, b, s.S);
    const std::int64_t d = s.opt.alignment == Alignment::bottom_right ? kl - ql : 0;
    const std::int64_t rows = s.packed ? ql : s.T;
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::int64_t lo = L < 0 ? 0 : std::max<std::int64_t>(0, i + d - L);
      const std::int64_t hi = R < 0 ? kl - 1 : std::min<std::int64_t>(kl - 1, i + d + R);
      if (i < ql && lo <= hi)
        continue;
      if (s.packed)
        row_zero(dq, q0 + i, s.N, s.H, 0, 0);
      else
        row_zero(dq, i, s.N, s.H, s.T, b);
    }
    if (padded)
      for (std::int64_t j = kl; j < s.S; ++j) {
        row_zero(dk, j, s.K, s.H, s.S, b);
        row_zero(dv, j, s.K, s.Hv, s.S, b);
      }
    q0 += s.packed ? ql : 0;
  }
  return ok;
}

} // namespace kattn::test
