// The naive backend: the codelab's unfused attention in Kokkos. It materialises the full
// [B, N, T, S] score matrix (fp32; f64 for f64 problems) on the execution space, applies softmax
// per row, then multiplies by V: three kernels, any execution space. The baseline the fused
// backends are measured against, not a fast path.
#pragma once

#include <memory>

#include "kokkosattn/registry.hpp"

namespace kattn::naive {

std::unique_ptr<BackendImpl> make_naive_backend();

} // namespace kattn::naive
