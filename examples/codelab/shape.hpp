// The sizes of one attention problem and what the results schema counts for it.
#pragma once

#include <kokkosattn/dtype.hpp>

#include <string>

namespace codelab {

// q [B, T, N, H], k and v [B, S, K, H], out [B, T, N, H] (docs/semantics.md's batched layout).
struct Shape {
  int B = 4, T = 128, S = 128, N = 8, K = 8, H = 64;
  kattn::DType dtype = kattn::DType::f32;
  bool causal = false;

  // The schema's count: 4·B·N·T·S·H, halved for causal; fwd+bwd is 3.5× (backward = 2.5×).
  double flops(bool with_backward) const {
    const double fwd = 4.0 * B * N * double(T) * double(S) * H * (causal ? 0.5 : 1.0);
    return with_backward ? 3.5 * fwd : fwd;
  }
  // "B=4 T=128 N=8 K=8 H=64 f32" (S only when it differs from T).
  std::string describe() const;
};

} // namespace codelab
