// One conformance case: an attention problem (a Spec of tests/common/reference_problem.hpp plus
// optional hand-made overrides), its direction and the feature tags the summary counts it under.
// Random cases are a pure function of (seed, index), so any single case can be regenerated alone.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/reference_problem.hpp"

namespace kattn::conformance {

struct Case {
  std::string name;                  // "random/57" or "regression/<id>"
  std::string description;           // the problem in one line (what --filter matches)
  std::vector<std::string> features; // summary rows this case counts under
  test::Spec spec;
  bool backward = false;
  // Applied to the problem after its random fill (mask / bias patterns of regression cases);
  // must be deterministic, it runs on the low-precision problem and on its f64 twin alike.
  std::function<void(test::Attn&)> customize;
  // q, k, v, out (and the gradients) live in sparse mappings whose last element sits past
  // 2^31 elements (64-bit indexing).
  bool huge_strides = false;
  std::int64_t index = -1; // random cases: the index; regression cases: -1
};

// Case `index` of the random matrix drawn with `seed`.
Case random_case(std::uint64_t seed, std::int64_t index);

// The fixed regression list (always runs unless a single case is being reproduced).
std::vector<Case> regression_cases();

// "f16 bwd B2 T17 S33 N4 K2 H64 causal ..." and the feature tags, from spec and direction.
void describe(Case& c);

} // namespace kattn::conformance
