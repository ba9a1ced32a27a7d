// Sizes and offsets computed in int64 with overflow checks: validation refuses tensors whose
// element count or largest offset does not fit (docs/semantics.md, rule strides), and backends
// refuse workspaces and launch sizes that do not (a wrapped product would allocate too little).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace kattn {

// a * b * ..., or nothing when the exact product does not fit in int64.
inline std::optional<std::int64_t> checked_product(std::initializer_list<std::int64_t> factors) {
  std::int64_t r = 1;
  for (const std::int64_t f : factors)
    if (__builtin_mul_overflow(r, f, &r))
      return std::nullopt;
  return r;
}

// a + b, or nothing when it does not fit in int64.
inline std::optional<std::int64_t> checked_sum(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

} // namespace kattn
