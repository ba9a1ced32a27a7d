// One conformance case: an attention problem (a Spec of tests/common/reference_problem.hpp plus
// optional hand-made overrides), its direction and the feature tags the summary counts it under.
// Random cases are a pure function of (seed, index), so any single case can be regenerated alone.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
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
  // > 0: the backends read k and v through a paged KV cache of this page size (rule paged_kv;
  // tests/common/paged_cache.hpp), built from the contiguous ones; forward cases only.
  std::int64_t page_size = 0;
  std::int64_t index = -1; // random cases: the index; regression cases: -1
};

// Which problems the random matrix draws. `all`: every feature, dtype and head dim of
// docs/semantics.md (the CPU backends serve them all; most draw f32/f64 or head dims the GPU
// kernels do not serve). `gpu`: the same draws moved into what the GPU kernel backends serve
// (bf16/f16, head dims 64/128/256, no boolean mask, ALiBi or dropout, bias in q's dtype), with
// more multi-tile lengths, so that a GPU run's cases are mostly accepted (issue 20).
enum class Mix { all, gpu };
std::string_view to_string(Mix m);

// Case `index` of the random matrix drawn with `seed` and `mix`.
Case random_case(std::uint64_t seed, std::int64_t index, Mix mix = Mix::all);

// The fixed regression list (always runs unless a single case is being reproduced).
std::vector<Case> regression_cases();

// "f16 bwd B2 T17 S33 N4 K2 H64 causal ..." and the feature tags, from spec and direction.
void describe(Case& c);

} // namespace kattn::conformance
