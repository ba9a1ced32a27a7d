// Shared check for backends: with bottom-right causal masking and T > S, the first T - S query
// rows see no key, so their output must be exactly 0 and their LSE -inf (never NaN).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/reference_problem.hpp"
#include "kokkosattn/registry.hpp"
#include "kokkosattn/validate.hpp"

namespace kattn::test {

inline void check_fully_masked_rows_exact(const BackendImpl& backend, const Spec& s) {
  Attn a(s);
  const ForwardProblem p = a.forward_problem();
  poison(a.out.view);
  poison(a.lse.view());
  backend.forward(p, validate(p), ExecContext{});
  const std::vector<double> out = a.out_values(), lse = a.lse_values();
  for (std::int64_t i = 0; i < s.T; ++i)
    for (std::int64_t n = 0; n < s.N; ++n) {
      const double l = lse[static_cast<std::size_t>(n * s.T + i)];
      if (i < s.T - s.S) {
        CHECK(l == -std::numeric_limits<double>::infinity());
        for (std::int64_t c = 0; c < s.Hv; ++c)
          CHECK(out[static_cast<std::size_t>((i * s.N + n) * s.Hv + c)] == 0.0);
      } else {
        CHECK(std::isfinite(l));
      }
    }
}

} // namespace kattn::test
