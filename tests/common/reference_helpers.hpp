// Test helpers for the semantics tests: index helpers for the logical [B, L, heads, dim]
// buffers, and an identity V that turns the output rows into the attention weights.
#pragma once

#include <string>
#include <vector>

#include "common/reference_problem.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/validate.hpp"

namespace kattn::test {

// Logical index of [b, t, head, f] in a batched [B, L, heads, dim] tensor.
inline std::size_t idx4(const Tensor& t, std::int64_t b, std::int64_t i, std::int64_t n,
                        std::int64_t f) {
  return static_cast<std::size_t>(((b * t.extent[1] + i) * t.extent[2] + n) * t.extent[3] + f);
}

// v[b, j, kv, c] = (j == c): then out[b, i, n, :] is row i of the attention weights of head
// n (times the dropout multipliers). Needs a batched problem with Hv == S.
inline void set_identity_v(Attn& a) {
  REQUIRE(a.spec.Hv == a.spec.S);
  REQUIRE_FALSE(a.spec.packed);
  std::vector<double> v(static_cast<std::size_t>(a.v.view.numel()), 0.0);
  for (std::int64_t b = 0; b < a.spec.B; ++b)
    for (std::int64_t j = 0; j < a.spec.S; ++j)
      for (std::int64_t g = 0; g < a.spec.K; ++g)
        v[idx4(a.v.view, b, j, g, j)] = 1.0;
  write_logical(a.v.view, v);
}

// Row i of head n of batch b of the (identity-V) output.
inline std::vector<double> out_row(const Attn& a, std::int64_t b, std::int64_t n, std::int64_t i) {
  const std::vector<double> o = a.out_values();
  std::vector<double> r(static_cast<std::size_t>(a.spec.Hv));
  for (std::int64_t f = 0; f < a.spec.Hv; ++f)
    r[static_cast<std::size_t>(f)] = o[idx4(a.out.view, b, i, n, f)];
  return r;
}

// Which keys row i of head n of batch b attends to (weight > 0), with an identity V.
inline std::vector<bool> visible_keys(const Attn& a, std::int64_t b, std::int64_t n,
                                      std::int64_t i) {
  std::vector<bool> r;
  for (double w : out_row(a, b, n, i))
    r.push_back(w > 0.0);
  return r;
}

inline Spec spec_of(std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K,
                    std::int64_t H, std::int64_t Hv) {
  Spec s;
  s.B = B, s.T = T, s.S = S, s.N = N, s.K = K, s.H = H, s.Hv = Hv;
  return s;
}

// The message validate throws for this problem (forward or backward), or "" when it is valid.
template <class P>
std::string refusal_of(const P& p) {
  try {
    validate(p);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

} // namespace kattn::test
