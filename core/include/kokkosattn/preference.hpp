// The order `auto` tries the backends in for one problem: preference_order, adjusted by the
// shape classes where a same-run measurement picked a different winner (docs/performance.md,
// "auto's order per shape class").
#pragma once

#include <array>
#include <string>

#include "kokkosattn/backend.hpp"
#include "kokkosattn/dtype.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn {

struct AutoOrder {
  std::array<Backend, preference_order.size()> order = preference_order;
  std::string rule; // why it differs from preference_order; empty when it does not
};

// Problems this small are bound by the per-call cost, not by the kernels (4 B N T S H FLOP).
inline constexpr double small_problem_flops = 1073741824.0; // 2^30

// `backward`: the order for a backward problem. Validated dims only (Dims from validate()).
AutoOrder auto_order(const Dims& d, bool backward);

} // namespace kattn
