// The backends this library can be built with, one factory each, defined in backends/<name>/.
// default_registry() (registry.cpp) adds those this build has (KokkosAttn_config.hpp); tests and
// tools make their own registries from them.
#pragma once

#include <memory>

#include "kokkosattn/registry.hpp"

namespace kattn {

namespace reference {
// Plain host C++ with double accumulation, written to be obviously right rather than fast: the
// ground truth every other backend is tested against; every option of docs/semantics.md.
std::unique_ptr<BackendImpl> make_reference_backend();
} // namespace reference

namespace naive {
// The codelab's unfused attention in Kokkos: materialises the [B, N, T, S] scores (fp32; f64 for
// f64 problems), softmax per row, then times V, any execution space: the baseline the fused
// backends are measured against, not a fast path. The two products are Kokkos Kernels GEMMs
// (vendor BLAS) in a build with Kokkos Kernels (KokkosAttn_ENABLE_KOKKOSKERNELS), else loops.
std::unique_ptr<BackendImpl> make_naive_backend();
} // namespace naive

namespace portable {
// FlashAttention-2's tiled online-softmax attention in Kokkos, forward and backward
// (recomputation from the LSE, deterministic, no atomics), O(T) extra memory, every option of
// docs/semantics.md, on any Kokkos execution space this build enables.
std::unique_ptr<BackendImpl> make_portable_backend();
} // namespace portable

namespace cudnn {
// NVIDIA's fused attention through the cudnn-frontend graph API, on CUDA device memory;
// ExecContext::stream is the cudaStream_t (nullptr = legacy default stream).
std::unique_ptr<BackendImpl> make_cudnn_backend();
} // namespace cudnn

namespace cuda {
// Our flash-attention forward kernels (cuda/sm80, cuda/sm90), bf16/f16 on CUDA device memory;
// ExecContext::stream is the cudaStream_t. Backward: refused.
std::unique_ptr<BackendImpl> make_cuda_backend();
} // namespace cuda

namespace hip_kernels {
// Our HIP forward kernels (hip/) on a gfx90a/gfx942 device, every tensor in hip_device memory.
// Registered only in builds with KokkosAttn_ENABLE_HIP_BACKEND (they link libamdhip64;
// docs/portability.md). Backward: refused.
std::unique_ptr<BackendImpl> make_hip_backend();
} // namespace hip_kernels

} // namespace kattn
