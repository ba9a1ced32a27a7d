// Backends that compute in float narrow the resolved softmax scale: one beyond float's range
// became inf (NaN rows in naive, fully masked rows in portable). They refuse it with this reason
// instead (docs/semantics.md, rule scale); the cap needs no such check (validation resolves caps
// beyond float's range to off).
#pragma once

#include <limits>
#include <string>
#include <string_view>

#include "kokkosattn/problem.hpp"

namespace kattn {

// Empty when d.scale fits a float; else why `who` refuses it.
inline std::string float_scale_limit(const Dims& d, std::string_view who) {
  if (d.scale <= std::numeric_limits<float>::max())
    return {};
  return std::string(who) + ": options.scale " + std::to_string(d.scale) +
         " exceeds float's range (this backend computes in float; f64 problems on reference, "
         "naive and portable compute in double)";
}

} // namespace kattn
