// A problem with no query or no key that still has outputs to write (docs/semantics.md, rule
// empty: no keys leaves every row fully masked, no queries leaves dk and dv zero). The CPU and
// portable backends write those results with their ordinary loops; the GPU kernel backends
// (cuda, hip, cudnn) refuse them with this reason: a TMA box, a cuDNN graph and their launch
// grids need at least one row of each. Problems with no output element never reach a backend.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "kokkosattn/problem.hpp"

namespace kattn {

// Given and with no extent 0 (tested without multiplying extents: safe before validation).
inline bool has_elements(const Tensor& t) {
  for (int d = 0; d < t.rank; ++d)
    if (t.extent[static_cast<std::size_t>(d)] == 0)
      return false;
  return t.defined();
}

// Empty when q and k both have elements; else why `who` refuses the problem.
inline std::string empty_sides_limit(const ForwardProblem& p, std::string_view who) {
  if (has_elements(p.q) && has_elements(p.k))
    return {};
  const bool no_keys = !has_elements(p.k);
  return std::string(who) + ": " + (no_keys ? "no keys (k " : "no queries (q ") +
         (no_keys ? p.k : p.q).shape_string() +
         "): the kernels need at least one of each; the portable and reference backends write "
         "the result (rule empty: rows fully masked, or zero dk and dv)";
}

} // namespace kattn
