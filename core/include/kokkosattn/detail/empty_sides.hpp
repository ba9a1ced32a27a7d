// A problem with no query or no key that still has outputs to write (docs/semantics.md, rule
// empty: no keys leaves every row fully masked, no queries leaves dk and dv zero). The CPU and
// portable backends write those results with their ordinary loops; the GPU kernel backends
// (cuda, hip, cudnn) refuse them with this reason: a TMA box, a cuDNN graph and their launch
// grids need at least one row of each. Problems with no output element never reach a backend.
#pragma once

#include <string>
#include <string_view>

#include "kokkosattn/problem.hpp"

namespace kattn {

// Empty when q and k both have elements; else why `who` refuses the problem.
inline std::string empty_sides_limit(const ForwardProblem& p, std::string_view who) {
  const auto empty = [](const Tensor& t) { return t.numel() == 0; };
  if (!empty(p.q) && !empty(p.k))
    return {};
  return std::string(who) + ": " + (empty(p.k) ? "no keys (k " : "no queries (q ") +
         (empty(p.k) ? p.k : p.q).shape_string() +
         "): the kernels need at least one of each; the portable and reference backends write "
         "the result (rule empty: rows fully masked, or zero dk and dv)";
}

} // namespace kattn
