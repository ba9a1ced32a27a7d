// The naive forward for one Kokkos execution space. Declared here, defined in
// naive_forward_impl.hpp and explicitly instantiated once per enabled space
// (naive_forward_<space>.cpp), so each space compiles in its own translation unit.
#pragma once

#include "KokkosAttn_config.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn::naive {

// How the two products (S = Q K^T and O = P V) run: the codelab's unfused attention as vendor
// GEMMs (naive_batched_gemm.hpp: cuBLAS strided batches on Kokkos::Cuda, else KokkosBlas::gemm
// on its BLAS / rocBLAS TPL), or hand-written Kokkos loops, the fallback of a build without
// Kokkos Kernels.
enum class Products { loops, gemm };

inline constexpr bool have_kokkos_kernels = KOKKOSATTN_HAS_KOKKOSKERNELS;

// Enqueues the kernels on `exec`; p must be validated (d its Dims) and supported by the naive
// backend, every tensor accessible from ExecSpace. Returns without waiting for them, except
// where its working memory must be (naive_scratch.hpp: kept between calls up to 1 GiB per
// execution space type, reused in stream order, one call at a time per process). Products::gemm
// throws Unsupported without Kokkos Kernels.
template <class ExecSpace>
void forward_on(const ExecSpace& exec, const ForwardProblem& p, const Dims& d, Products products);

} // namespace kattn::naive
